package panes

import (
	"testing"
	"time"
)

func TestPublishedWakesThoseWaiting(t *testing.T) {
	var p Published[int]
	if p.Load() != 0 {
		t.Fatal("the zero value holds a state")
	}
	ch := p.Changed()
	select {
	case <-ch:
		t.Fatal("Changed closed before anything was published")
	default:
	}
	done := make(chan int)
	go func() {
		<-ch
		done <- p.Load()
	}()
	p.Publish(7)
	select {
	case got := <-done:
		if got != 7 {
			t.Fatalf("a waiter read %d, want 7", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Publish did not wake the waiter")
	}
	if next := p.Changed(); next == ch {
		t.Fatal("Changed handed out the channel already closed")
	}
}
