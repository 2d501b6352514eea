package engine

import (
	"errors"

	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/nowframe"
	"github.com/awbridge/awbridge/sidecar"
	"github.com/awbridge/awbridge/toolbus"
	"github.com/awbridge/awbridge/upstream"
)

// Hints of the failures a setting fixes: fixed text, never the source's
// own words.
const (
	hintAwAuth = "ActivityWatch refused awbridge's API key (or its lack of one): set activitywatch.api_key " +
		"(AWBRIDGE_AW_API_KEY) to the api_key of aw-server-rust's [auth] section, then restart awbridge"
	hintAwHost = "ActivityWatch refused the Host header awbridge sends: set activitywatch.host_header " +
		"(AWBRIDGE_AW_HOST_HEADER) to a Host it accepts, e.g. 127.0.0.1:5600 or its --host value, then restart awbridge"
	hintSidecarAuth = "the sidecar refused awbridge's GET /probe (401 or 403): awbridge sends no credentials, so the " +
		"probe must answer without them; check that sidecar.url (AWBRIDGE_SIDECAR_URL) names the probe sidecar"
	hintAwEvents = "ActivityWatch answers, but the events of a selected bucket could not be read " +
		"(the frame's parts from it say unreadable): see ActivityWatch's own log"
	hintHistorySlow = "ActivityWatch answers, but slowly for this much history: the days read are kept, so asking again " +
		"reads only the rest; or ask for a shorter period, or raise activitywatch.history_timeout (AWBRIDGE_AW_HISTORY_TIMEOUT)"
	hintHistoryFailed = "ActivityWatch answers, but failed to send these events: see ActivityWatch's own log; " +
		"a period without that day may work"
)

// classifyAW sorts a failure of ActivityWatch: a refused API key or Host
// header is a misconfiguration (never opens the circuit); failed event
// reads have their own code; anything else keeps AwUnavailable.
func classifyAW(err error) upstream.Class {
	switch {
	case errors.Is(err, aw.ErrHostRejected):
		return upstream.Class{Code: toolbus.CodeAwHostRejected, Hint: hintAwHost, Misconfigured: true}
	case errors.Is(err, aw.ErrUnauthorized):
		return upstream.Class{Code: toolbus.CodeAwAuthFailed, Hint: hintAwAuth, Misconfigured: true}
	case errors.As(err, new(*nowframe.UnreadableError)):
		return upstream.Class{Code: toolbus.CodeAwEventsUnreadable, Hint: hintAwEvents}
	}
	return upstream.Class{}
}

// classifyHistory is classifyAW, marking the failures ActivityWatch
// answered (a status, a vanished bucket, a bad body): only a server that
// does not answer, or too slowly, opens the history's circuit.
func classifyHistory(err error) upstream.Class {
	c := classifyAW(err)
	switch aw.KindOf(err) {
	case aw.HTTPStatus, aw.NotFound, aw.Malformed, aw.TooLarge:
		c.Answered = !c.Misconfigured
	}
	return c
}

// classifySidecar sorts a failure of the sidecar: a 401 or 403 is a
// misconfiguration.
func classifySidecar(err error) upstream.Class {
	if errors.Is(err, sidecar.ErrUnauthorized) {
		return upstream.Class{Code: toolbus.CodeSidecarAuthFailed, Hint: hintSidecarAuth, Misconfigured: true}
	}
	return upstream.Class{}
}
