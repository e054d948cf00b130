package designfile

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/queueimpl"
)

// classesByFault is what a design file documents it earns, as written: the classes its
// verdict may fall in, by fault, "none" for no fault. A lock file writes one; a queue
// file one for each fulfil, as {"naive": {...}, "idempotent": {...}}.
type classesByFault map[string][]string

// lockVerdicts reads a lock file's "documented".
func lockVerdicts(raw json.RawMessage) (faults.Verdicts, error) {
	if raw == nil {
		return faults.Verdicts{}, nil
	}
	var byFault classesByFault
	if err := strictly(raw, &byFault); err != nil {
		return faults.Verdicts{}, fmt.Errorf(`documented: %w (write {"none": ["SAFE"], "client-pause": ["OVERSOLD"], ...})`, err)
	}
	return faults.ParseVerdicts("documented", byFault, faults.Locks)
}

// queueVerdicts reads a queue file's "documented".
func queueVerdicts(raw json.RawMessage) (queueimpl.Verdicts, error) {
	if raw == nil {
		return queueimpl.Verdicts{}, nil
	}
	var byFulfil struct {
		Naive      classesByFault `json:"naive"`
		Idempotent classesByFault `json:"idempotent"`
	}
	if err := strictly(raw, &byFulfil); err != nil {
		return queueimpl.Verdicts{}, fmt.Errorf(`documented: %w (write {"naive": {"none": ["SAFE"], ...}, "idempotent": {...}})`, err)
	}
	var v queueimpl.Verdicts
	var err error
	if v.Naive, err = faults.ParseVerdicts("documented.naive", byFulfil.Naive, faults.Queues); err != nil {
		return v, err
	}
	v.Idempotent, err = faults.ParseVerdicts("documented.idempotent", byFulfil.Idempotent, faults.Queues)
	return v, err
}

// strictly decodes raw into v, refusing fields v does not have.
func strictly(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
