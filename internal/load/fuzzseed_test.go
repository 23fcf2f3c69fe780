package load

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/login/formlogin/formlogintest"
)

// Seeds of the fuzz targets: responses in the shapes the products send
// (header names, order and casing as Hydra, Keycloak and the reference OP
// answer; bodies from their token, introspection, userinfo and discovery
// endpoints), with every framing the parsers handle.

// httpResp renders a response with a Content-Length of its body.
func httpResp(statusLine string, headers []string, body string) string {
	h := slices.Concat(headers, []string{"Content-Length: " + strconv.Itoa(len(body))})
	return statusLine + "\r\n" + strings.Join(h, "\r\n") + "\r\n\r\n" + body
}

// chunkedResp renders a response with a chunked body cut every n bytes.
func chunkedResp(statusLine string, headers []string, body string, n int) string {
	var b strings.Builder
	b.WriteString(statusLine + "\r\n" + strings.Join(slices.Concat(headers, []string{"Transfer-Encoding: chunked"}), "\r\n") + "\r\n\r\n")
	for len(body) > 0 {
		c := body[:min(n, len(body))]
		body = body[len(c):]
		b.WriteString(strconv.FormatInt(int64(len(c)), 16) + "\r\n" + c + "\r\n")
	}
	b.WriteString("0\r\n\r\n")
	return b.String()
}

const (
	hydraTokenBody = `{"access_token":"ory_at_Zm9vYmFyYmF6cXV4.aGVsbG8td29ybGQtc2lnbmF0dXJl","expires_in":3599,` +
		`"scope":"openid","token_type":"bearer"}`
	keycloakTokenBody = `{"access_token":"eyJhbGciOiJSUzI1NiIsInR5cCIgOiAiSldUIiwia2lkIiA6ICJrMSJ9.eyJleHAiOjE3OTk5OTk5OTl9.c2ln",` +
		`"expires_in":300,"refresh_expires_in":1800,"refresh_token":"eyJhbGciOiJIUzUxMiJ9.eyJ0eXAiOiJSZWZyZXNoIn0.cmVm",` +
		`"token_type":"Bearer","not-before-policy":0,"session_state":"3f1c","scope":"profile email"}`
	refopTokenBody     = `{"access_token":"Zk9VT3N0Wk5sR2pn","token_type":"Bearer","expires_in":299}` + "\n"
	introspectBody     = `{"active":true,"scope":"openid","client_id":"bench-svc","sub":"bench-svc","exp":1799999999,"iat":1799996399,"iss":"http://127.0.0.1:4444/","token_type":"Bearer","token_use":"access_token"}`
	userinfoBody       = `{"sub":"6c1b7a9e-0c55-4f7e-a2b8-0f6a4e3d2c1b","email_verified":false,"preferred_username":"service-account-bench-svc"}`
	oauthErrorBody     = `{"error":"invalid_client","error_description":"Invalid client or Invalid client credentials"}`
	hydraLoginLocation = "http://127.0.0.1:4444/oauth2/fallbacks/login?login_challenge=ZXlKaGJHY2lPaUpJVXpJMU5pSjku"
)

// seedResponses are whole responses as the products send them.
func seedResponses(tb testing.TB) []string {
	tb.Helper()
	disc, err := os.ReadFile("testdata/refop-discovery.json")
	if err != nil {
		tb.Fatal(err)
	}
	goHeaders := []string{"Content-Type: application/json", "Date: Mon, 30 Nov 2026 10:00:00 GMT"}
	hydraHeaders := []string{"Cache-Control: no-store", "Content-Type: application/json;charset=UTF-8",
		"Pragma: no-cache", "Date: Mon, 30 Nov 2026 10:00:00 GMT"}
	kcHeaders := []string{"Cache-Control: no-store", "Pragma: no-cache", "content-type: application/json",
		"Referrer-Policy: no-referrer", "Strict-Transport-Security: max-age=31536000; includeSubDomains",
		"X-Content-Type-Options: nosniff", "X-Frame-Options: SAMEORIGIN"}
	return []string{
		httpResp("HTTP/1.1 200 OK", hydraHeaders, hydraTokenBody),
		httpResp("HTTP/1.1 200 OK", kcHeaders, keycloakTokenBody),
		httpResp("HTTP/1.1 200 OK", goHeaders, refopTokenBody),
		httpResp("HTTP/1.1 200 OK", goHeaders, string(disc)),
		chunkedResp("HTTP/1.1 200 OK", goHeaders, string(disc), 1024),
		chunkedResp("HTTP/1.1 200 OK", kcHeaders, introspectBody, 64),
		httpResp("HTTP/1.1 200 OK", hydraHeaders, userinfoBody),
		httpResp("HTTP/1.1 401 Unauthorized", kcHeaders, oauthErrorBody),
		httpResp("HTTP/1.1 302 Found", []string{"Location: " + hydraLoginLocation,
			"Set-Cookie: ory_hydra_login_csrf_dev_134972871=MTc5OTk5; Path=/; Max-Age=1800; HttpOnly; SameSite=Lax",
			"Date: Mon, 30 Nov 2026 10:00:00 GMT"}, ""),
		httpResp("HTTP/1.1 303 See Other", []string{"Content-Type: text/html; charset=utf-8",
			"Location: /login/username?authRequestID=V2_abc", "Date: Mon, 30 Nov 2026 10:00:00 GMT"},
			"<a href=\"/login/username?authRequestID=V2_abc\">See Other</a>.\n\n"),
		chunkedResp("HTTP/1.1 200 OK", []string{"Cache-Control: no-store, must-revalidate, max-age=0",
			"content-type: text/html;charset=utf-8", "Content-Language: en"}, formlogintest.KeycloakPage, 512),
		"HTTP/1.1 100 Continue\r\n\r\n" + httpResp("HTTP/1.1 200 OK", goHeaders, refopTokenBody),
		"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" + introspectBody,
		httpResp("HTTP/1.1 503 Service Unavailable", []string{"Connection: close"}, "busy\n"),
		"HTTP/1.1 204 No Content\r\nDate: Mon, 30 Nov 2026 10:00:00 GMT\r\n\r\n",
	}
}
