// Package adminaccepttest holds what the Hydra fakes of loadstep's and
// mintpool's tests share: the admin API's accept bodies as Hydra
// documents them (a subset of their fields), written apart from
// adminaccept's own types, so that a field the client names wrong is an
// unknown field to a fake, as it is to Hydra. Tests only.
package adminaccepttest

import (
	"encoding/json"
	"io"
)

// LoginAccept is the body of PUT /admin/oauth2/auth/requests/login/accept.
type LoginAccept struct {
	Subject  string `json:"subject"`
	Remember bool   `json:"remember"`
}

// ConsentAccept is the body of PUT /admin/oauth2/auth/requests/consent/accept.
type ConsentAccept struct {
	GrantScope    []string `json:"grant_scope"`
	GrantAudience []string `json:"grant_access_token_audience"`
	Remember      bool     `json:"remember"`
	Session       struct {
		IDToken     map[string]any `json:"id_token"`
		AccessToken map[string]any `json:"access_token"`
	} `json:"session"`
}

// Decode decodes an accept body into v, refusing unknown fields as Hydra
// does.
func Decode(r io.Reader, v any) error {
	d := json.NewDecoder(r)
	d.DisallowUnknownFields()
	return d.Decode(v)
}
