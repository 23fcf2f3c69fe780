// Package formlogintest holds what the tests of formlogin, loadstep and
// mintpool share: the login pages of the products' shapes (Keycloak's
// login theme, the reference OP's template) and OP, a fake of both
// products' logins. Tests only.
package formlogintest

// KeycloakAction is the action of KeycloakPage's form, HTML-escaped as
// the theme writes it.
const KeycloakAction = "http://127.0.0.1:8080/realms/bench/login-actions/authenticate?session_code=S1&amp;execution=e1&amp;client_id=bench-web&amp;tab_id=t1"

// KeycloakPage is the shape of Keycloak's login form (its theme's
// form, hidden inputs and escaped action URL).
const KeycloakPage = `<!DOCTYPE html><html class="login-pf"><head><meta charset="utf-8"><title>Sign in to bench</title></head>
<body><div id="kc-form-wrapper">
<form id="kc-form-login" onsubmit="login.disabled = true; return true;" action="` + KeycloakAction + `" method="post">
<input tabindex="1" id="username" class="pf-c-form-control" name="username" value="" type="text" autofocus autocomplete="off"/>
<input tabindex="2" id="password" class="pf-c-form-control" name="password" type="password" autocomplete="off"/>
<input type="hidden" id="id-hidden-input" name="credentialId" value=""/>
<input tabindex="4" class="pf-c-button" name="login" id="kc-login" type="submit" value="Sign In"/>
</form></div></body></html>
`

// RefopPage is the shape of the reference OP's login template.
const RefopPage = `<!DOCTYPE html>
<html><head><meta charset="UTF-8"><title>Login</title></head>
<body style="display: flex; align-items: center; justify-content: center; height: 100vh;">
	<form method="POST" action="/login/username" style="height: 200px; width: 200px;">
		<input type="hidden" name="id" value="V2_abc&#43;123">
		<div><label for="username">Username:</label><input id="username" name="username" style="width: 100%"></div>
		<div><label for="password">Password:</label><input type="password" id="password" name="password" style="width: 100%"></div>
		<p style="color:red; min-height: 1rem;"></p>
		<button type="submit">Login</button>
	</form>
</body></html>
`
