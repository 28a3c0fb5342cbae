package natsqueue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/nats-io/nats.go/jetstream"
)

// Metadata an executor puts on its consumer, so that another executor can
// say whose a device is, and a restart can tell its own earlier consumer.
const (
	metaExecutorID = "vigil_executor_id"
	metaHost       = "vigil_host"
	metaDevices    = "vigil_devices"
)

// ClaimError is a device another executor already serves. On a work-queue
// stream two consumers may not take the same subject (the server refuses
// the second), and this says which device and whose consumer, before the
// server's bare "filtered consumer not unique".
type ClaimError struct {
	Device   string
	Consumer string // the other executor's consumer
	Host     string // where it said it runs ("" if it did not)
}

func (e *ClaimError) Error() string {
	where := ""
	if e.Host != "" {
		where = fmt.Sprintf(" on %q", e.Host)
	}
	return fmt.Sprintf("device %q is already served by another executor (consumer %s%s): one executor per device; "+
		"remove the device from one of the two configs, or, if that executor is gone for good, delete its consumer "+
		"(nats consumer rm %s %s)", e.Device, e.Consumer, where, SubmitStream, e.Consumer)
}

// claim creates or updates this executor's consumer on VIGIL_SUBMIT,
// filtered on its devices' subjects, and on SubmitSubject unless another
// executor's consumer has it. A consumer this executor left under another
// name (its device list changed: the name follows from the list) is
// removed first; a device another executor serves is a *ClaimError.
func claim(ctx context.Context, js jetstream.JetStream, name, id, host string, devices []string,
	log *slog.Logger) (jetstream.Consumer, error) {
	s, err := js.Stream(ctx, SubmitStream)
	if err != nil {
		return nil, fmt.Errorf("nats stream %s: %w", SubmitStream, shown(err))
	}
	takenGeneral, err := checkClaims(ctx, js, s, name, id, devices, log)
	if err != nil {
		return nil, err
	}
	filters := make([]string, 0, len(devices)+1)
	for _, d := range devices {
		filters = append(filters, DeviceSubject(d), DeviceSubject(d)+AgentSubjectInfix+"*")
	}
	if !takenGeneral {
		filters = append(filters, SubmitSubject)
	}
	ids, _ := json.Marshal(devices)
	cons, err := js.CreateOrUpdateConsumer(ctx, SubmitStream, jetstream.ConsumerConfig{
		Durable: name, FilterSubjects: filters, AckPolicy: jetstream.AckExplicitPolicy, AckWait: AckWait,
		MaxAckPending: 1, Description: "vigil serve: the submissions for its devices",
		Metadata: map[string]string{metaExecutorID: id, metaHost: host, metaDevices: string(ids)}})
	if err != nil {
		// another executor claiming a device at the same moment: say which
		if _, cerr := checkClaims(ctx, js, s, name, id, devices, log); cerr != nil {
			return nil, cerr
		}
		return nil, fmt.Errorf("nats consumer %s: %w", name, shown(err))
	}
	return cons, nil
}

// checkClaims reads every consumer on the stream and reports whether
// another one takes SubmitSubject.
func checkClaims(ctx context.Context, js jetstream.JetStream, s jetstream.Stream, name, id string, devices []string,
	log *slog.Logger) (bool, error) {
	list := s.ListConsumers(ctx)
	var infos []*jetstream.ConsumerInfo
	for ci := range list.Info() {
		infos = append(infos, ci)
	}
	if err := list.Err(); err != nil {
		return false, fmt.Errorf("nats stream %s: listing its consumers: %w", SubmitStream, shown(err))
	}
	takenGeneral := false
	for _, ci := range infos {
		theirs := ci.Config.Metadata[metaExecutorID]
		if ci.Name == name {
			if theirs != "" && id != "" && theirs != id && len(devices) > 0 {
				// the same device set on another home: the same name,
				// which an update would silently share
				return false, &ClaimError{Device: devices[0], Consumer: ci.Name, Host: ci.Config.Metadata[metaHost]}
			}
			continue
		}
		if id != "" && theirs == id {
			// this executor's consumer for an earlier device list; what
			// it left unacknowledged stays in the stream for the new one
			if err := js.DeleteConsumer(ctx, SubmitStream, ci.Name); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
				return false, fmt.Errorf("nats consumer %s (this executor's, for its earlier devices): %w", ci.Name, shown(err))
			}
			log.Info("queue: replaced this executor's consumer for its earlier device list", "consumer", ci.Name)
			continue
		}
		filters := ci.Config.FilterSubjects
		if ci.Config.FilterSubject != "" {
			filters = append(filters, ci.Config.FilterSubject)
		}
		if len(filters) == 0 {
			return false, fmt.Errorf("nats stream %s: the consumer %s takes every submission, so no executor can "+
				"take its devices'; remove it (nats consumer rm %s %s)", SubmitStream, ci.Name, SubmitStream, ci.Name)
		}
		for _, d := range devices {
			if slices.Contains(filters, DeviceSubject(d)) || slices.Contains(filters, DeviceSubjects) {
				return false, &ClaimError{Device: d, Consumer: ci.Name, Host: ci.Config.Metadata[metaHost]}
			}
		}
		if slices.Contains(filters, SubmitSubject) {
			takenGeneral = true
		}
	}
	return takenGeneral, nil
}
