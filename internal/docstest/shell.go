package docstest

import (
	"regexp"
	"strings"
)

// Simple splits a shell text into its simple commands, each a list of
// words with quotes removed: commands end at a newline, ;, &, |, &&, ||,
// ( and ). A backslash before a newline continues the line; # starts a
// comment at the start of a word; $(...) and ${...} stay inside their word,
// as do quoted strings. Redirections (>FILE, 2>&1, < FILE) are dropped.
// It reads the shell the docs show, not every shell: no here-documents.
func Simple(text string) [][]string {
	var cmds [][]string
	var cur []string
	var word strings.Builder
	inWord, redirect := false, false
	endWord := func() {
		if !inWord {
			return
		}
		w := word.String()
		word.Reset()
		inWord = false
		switch {
		case redirect:
			redirect = false
		case redirectRe.MatchString(w):
			// A bare > takes the next word as its file; 2>&1 and >FILE do not.
			redirect = redirectRe.ReplaceAllString(w, "") == "" && !strings.Contains(w, "&")
		default:
			cur = append(cur, w)
		}
	}
	endCmd := func() {
		endWord()
		if len(cur) > 0 {
			cmds = append(cmds, cur)
		}
		cur, redirect = nil, false
	}
	r := []rune(text)
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch {
		case c == '\\' && i+1 < len(r) && r[i+1] == '\n':
			i++
		case c == '\\' && i+1 < len(r):
			word.WriteRune(r[i+1])
			inWord = true
			i++
		case c == '\'':
			j := indexFrom(r, i+1, '\'')
			word.WriteString(string(r[i+1 : j]))
			inWord, i = true, j
		case c == '"':
			j := closingQuote(r, i+1)
			word.WriteString(string(r[i+1 : j]))
			inWord, i = true, j
		case c == '$' && i+1 < len(r) && (r[i+1] == '(' || r[i+1] == '{'):
			j := closingParen(r, i+1)
			word.WriteString(string(r[i:min(j+1, len(r))]))
			inWord, i = true, j
		case c == '#' && !inWord:
			for i < len(r) && r[i] != '\n' {
				i++
			}
			endCmd()
		case c == '\n' || c == ';' || c == '|' || c == '&' || c == '(' || c == ')':
			if c == '&' && word.Len() > 0 && strings.HasSuffix(word.String(), ">") {
				word.WriteRune(c) // 2>&1
				inWord = true
				continue
			}
			endCmd()
		case c == ' ' || c == '\t':
			endWord()
		default:
			word.WriteRune(c)
			inWord = true
		}
	}
	endCmd()
	return cmds
}

// redirectRe is a word that is a redirection or starts one: >FILE, 2>&1,
// >>FILE, <FILE, 2>/dev/null, or a bare > whose target is the next word.
var redirectRe = regexp.MustCompile(`^[0-9]*(>>?|<)(&[0-9]+)?`)

// indexFrom is the index of c at or after i, or len(r).
func indexFrom(r []rune, i int, c rune) int {
	for ; i < len(r); i++ {
		if r[i] == c {
			return i
		}
	}
	return len(r)
}

// closingQuote is the index of the " that closes a string opened before i.
func closingQuote(r []rune, i int) int {
	for ; i < len(r); i++ {
		switch r[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return len(r)
}

// closingParen is the index of the ) or } that closes the ( or { at i.
func closingParen(r []rune, i int) int {
	open, shut := r[i], map[rune]rune{'(': ')', '{': '}'}[r[i]]
	depth := 0
	for ; i < len(r); i++ {
		switch r[i] {
		case '\'':
			i = indexFrom(r, i+1, '\'')
		case '"':
			i = closingQuote(r, i+1)
		case open:
			depth++
		case shut:
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return len(r)
}

// assignRe is a word that assigns a shell variable (VAR=value).
var assignRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// keywords start a command without being it.
var keywords = map[string]bool{"do": true, "then": true, "else": true, "time": true, "exec": true, "!": true, "{": true, "sudo": true, "nohup": true}

// Command strips what comes before the command itself: variable
// assignments, keywords such as do and exec.
func Command(words []string) []string {
	for len(words) > 0 && (assignRe.MatchString(words[0]) || keywords[words[0]]) {
		words = words[1:]
	}
	return words
}
