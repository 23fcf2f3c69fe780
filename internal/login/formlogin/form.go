package formlogin

import (
	"bytes"
	"net/url"
	"strings"

	"golang.org/x/net/html"
)

// Form is a POST form of a page, as a browser would submit it.
type Form struct {
	Action *url.URL    // absolute: resolved against the page URL
	Hidden [][2]string // name, value of each hidden input, in page order
	// User and Password name its user-name and password inputs: the first
	// password input, and the last text, email or tel input (or input
	// without a type) before it; "" where it has none.
	User, Password string
	// Checked are the name and value of each checked checkbox and radio
	// button, in page order (a consent page's scopes).
	Checked [][2]string
	// Submit is the name and value of its first named submit control
	// (<input type=submit> or <button>, whose type is submit unless it says
	// otherwise): a browser sends the one clicked.
	Submit [2]string
}

// ParseForm returns the first POST form of page (fetched from base); nil
// when there is none.
func ParseForm(page []byte, base *url.URL) *Form {
	forms := ParseForms(page, base)
	if len(forms) == 0 {
		return nil
	}
	return forms[0]
}

// ParseForms returns the POST forms of page (fetched from base), in page
// order. It reads the page with golang.org/x/net/html's tokenizer, as a
// browser reads tags: attribute values unescaped (&amp; in Keycloak's action
// URL), names case-insensitive, nothing inside comments, scripts or
// textareas taken for a tag; an input outside any form belongs to none, and
// a form left open ends with the page.
func ParseForms(page []byte, base *url.URL) []*Form {
	var forms []*Form
	var cur *Form // the POST form being read; nil outside one
	inForm := false
	z := html.NewTokenizer(bytes.NewReader(page))
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return forms
		case html.EndTagToken:
			if name, _ := z.TagName(); string(name) == "form" {
				cur, inForm = nil, false
			}
			continue
		case html.StartTagToken, html.SelfClosingTagToken:
		default:
			continue
		}
		name, hasAttr := z.TagName()
		var attrs map[string]string
		if hasAttr {
			attrs = tagAttrs(z)
		}
		switch string(name) {
		case "form":
			if inForm { // a form inside a form: browsers ignore the inner tag
				continue
			}
			inForm = true
			if !strings.EqualFold(attrs["method"], "post") {
				continue
			}
			action, err := url.Parse(attrs["action"]) // "" = the page itself
			if err != nil {
				continue
			}
			cur = &Form{Action: base.ResolveReference(action)}
			forms = append(forms, cur)
		case "input":
			if cur != nil {
				cur.input(attrs)
			}
		case "button":
			if cur != nil && cur.Submit[0] == "" && attrs["name"] != "" {
				if t := strings.ToLower(attrs["type"]); t == "" || t == "submit" {
					cur.Submit = [2]string{attrs["name"], attrs["value"]}
				}
			}
		}
	}
}

// tagAttrs are the current tag's attributes, the first of a repeated name
// winning (as browsers keep it).
func tagAttrs(z *html.Tokenizer) map[string]string {
	attrs := map[string]string{}
	for more := true; more; {
		var k, v []byte
		k, v, more = z.TagAttr()
		if _, dup := attrs[string(k)]; !dup {
			attrs[string(k)] = string(v)
		}
	}
	return attrs
}

// input takes one <input> of the form.
func (f *Form) input(attrs map[string]string) {
	name := attrs["name"]
	_, checked := attrs["checked"]
	switch t := strings.ToLower(attrs["type"]); {
	case t == "hidden" && name != "":
		f.Hidden = append(f.Hidden, [2]string{name, attrs["value"]})
	case t == "password" && name != "" && f.Password == "":
		f.Password = name
	case (t == "" || t == "text" || t == "email" || t == "tel") && name != "" && f.Password == "":
		f.User = name // the last before the password input
	case (t == "checkbox" || t == "radio") && name != "" && checked:
		value, ok := attrs["value"]
		if !ok {
			value = "on" // a browser's value for a checkbox without one
		}
		f.Checked = append(f.Checked, [2]string{name, value})
	case t == "submit" && name != "" && f.Submit[0] == "":
		f.Submit = [2]string{name, attrs["value"]}
	}
}

// LoginForm is the first POST form of page with a password input, else
// its first POST form; nil when it has none.
func LoginForm(page []byte, base *url.URL) *Form {
	forms := ParseForms(page, base)
	for _, f := range forms {
		if f.Password != "" {
			return f
		}
	}
	if len(forms) == 0 {
		return nil
	}
	return forms[0]
}
