package cli

import (
	"context"
	"fmt"
	"sync"

	"github.com/vigil-dev/vigil/exec/mcpserver"
)

// serveMCP is `vigil serve --mcp ADDR`: the Streamable HTTP endpoint of
// `vigil mcp --http` inside the executor, on serve's engine and queue, so
// agents reach a protected home only through it (its tokens say who they
// are) and need no access to the home's files.
type serveMCP struct {
	app     *App
	addr    string
	callers *mcpserver.Callers
	grants  *mcpserver.Grants
	ep      *mcpHTTP
	closeFn func()
	closed  sync.Once
}

// prepareServeMCP checks --mcp, reads the tokens and loads the grants'
// issuer key before serve opens anything: a bad address, a missing, short
// or shared token, or grants whose leases would not verify refuse the
// start (exit 2). Nil when --mcp is not given.
func prepareServeMCP(app *App, addr string, allowRemote bool) (*serveMCP, error) {
	if addr == "" {
		return nil, nil
	}
	if err := checkListenFlag("--mcp", addr, allowRemote); err != nil {
		return nil, Fail(ExitBadInput, err)
	}
	callers, err := mcpCallers(app)
	if err != nil {
		return nil, Fail(ExitBadInput, fmt.Errorf("--mcp: %w", err))
	}
	grants, err := mcpGrants(app)
	if err != nil {
		return nil, Fail(ExitBadInput, fmt.Errorf("--mcp: %w", err))
	}
	return &serveMCP{app: app, addr: addr, callers: callers, grants: grants}, nil
}

// start serves the tools on the engine serve opened (App.Engine is one per
// process) until ctx ends or stop is called.
func (s *serveMCP) start(ctx context.Context) error {
	if s == nil {
		return nil
	}
	log := s.app.Log
	d, closeDeps, err := mcpDeps(ctx, s.app, log)
	if err != nil {
		return err
	}
	d.Grants = s.grants
	ep, err := startMCPHTTP(d, s.addr, s.callers, nil, log)
	if err != nil {
		closeDeps()
		return Failf(ExitExecution, "--mcp: %v", err)
	}
	s.ep, s.closeFn = ep, closeDeps
	go func() {
		<-ctx.Done()
		s.stopNow()
	}()
	fmt.Fprintf(s.app.Out, "vigil serve: mcp on http://%s/mcp\n", ep.Addr())
	log.Info("vigil serve: mcp listening", "addr", ep.Addr().String(), "agents", s.callers.Agents())
	return nil
}

// stopNow stops the endpoint (its calls answered) and closes what the
// tools ran on; a second caller returns once the first is done.
func (s *serveMCP) stopNow() {
	if err := s.ep.Stop(mcpStopTimeout); err != nil {
		s.app.Log.Warn("vigil serve: mcp stop", "err", err)
	}
	s.closed.Do(s.closeFn)
}

// stop stops the endpoint if ctx has not already, and returns once it has
// stopped.
func (s *serveMCP) stop() {
	if s == nil || s.ep == nil {
		return
	}
	s.stopNow()
}
