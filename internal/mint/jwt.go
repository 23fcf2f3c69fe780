package mint

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// signingKey is a parsed key with the identity it signs for.
type signingKey struct {
	key      *rsa.PrivateKey
	kid      string
	userID   string
	clientID string
}

// loadKey reads a Zitadel JSON key file or a PEM RSA private key. Errors name the file.
func loadKey(path string) (*signingKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading key file: %w", err)
	}
	if bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
		return parseKeyJSON(path, b)
	}
	key, err := jwt.ParseRSAPrivateKeyFromPEM(b)
	if err != nil {
		return nil, fmt.Errorf("key file %s: not a Zitadel JSON key nor a PEM RSA private key: %w", path, err)
	}
	return &signingKey{key: key}, nil
}

// KeyFile is Zitadel's JSON key file, the part the jwt flows sign with
// (and products/zitadel/zitadelapi's Setup checks in what Zitadel returns).
type KeyFile struct {
	Type     string `json:"type"` // "application" or "serviceaccount"
	KeyID    string `json:"keyId"`
	Key      string `json:"key"` // PEM private key
	UserID   string `json:"userId"`
	AppID    string `json:"appId"`
	ClientID string `json:"clientId"`
}

// parseKeyJSON reads Zitadel's JSON key format (KeyFile):
// "serviceaccount" keys carry userId, "application" keys carry clientId
// (and appId).
func parseKeyJSON(path string, b []byte) (*signingKey, error) {
	var kf KeyFile
	if err := json.Unmarshal(b, &kf); err != nil {
		return nil, fmt.Errorf("key file %s: malformed JSON: %w", path, err)
	}
	if kf.Key == "" {
		return nil, fmt.Errorf("key file %s: no \"key\" (PEM private key) field", path)
	}
	key, err := jwt.ParseRSAPrivateKeyFromPEM([]byte(kf.Key))
	if err != nil {
		return nil, fmt.Errorf("key file %s: field \"key\": %w", path, err)
	}
	return &signingKey{key: key, kid: kf.KeyID, userID: kf.UserID, clientID: kf.ClientID}, nil
}

// jwtFlow signs RS256 assertions locally: RFC 7523 jwt-bearer grants or
// private_key_jwt client assertions. Both carry iss, sub, aud, iat, exp and
// a unique jti; they differ in whose id is iss/sub by default.
type jwtFlow struct {
	key      *rsa.PrivateKey
	kid      string
	iss, sub string
	aud      jwt.ClaimStrings // one audience, or several from a comma-separated --aud
	ttl      time.Duration
}

func newJWTFlow(cfg *Config) (*jwtFlow, error) {
	sk, err := loadKey(cfg.KeyFile)
	if err != nil {
		return nil, err
	}
	f := &jwtFlow{key: sk.key, kid: cmp.Or(cfg.KeyID, sk.kid), aud: strings.Split(cfg.Audience, ","), ttl: cfg.TTL}
	if cfg.Flow == FlowClientAssertion {
		f.iss = cmp.Or(cfg.JWTIss, sk.clientID, sk.userID, cfg.ClientID)
	} else {
		f.iss = cmp.Or(cfg.JWTIss, sk.userID, sk.clientID)
	}
	f.sub = cmp.Or(cfg.JWTSub, f.iss)
	if f.kid == "" {
		return nil, fmt.Errorf("key file %s: no keyId: pass --kid", cfg.KeyFile)
	}
	if f.iss == "" {
		return nil, fmt.Errorf("key file %s: no userId or clientId: pass --iss", cfg.KeyFile)
	}
	return f, nil
}

func (f *jwtFlow) mint(_ context.Context, _ *worker, _ int) (credential, error) {
	now := time.Now()
	exp := now.Add(f.ttl)
	claims := jwt.RegisteredClaims{
		Issuer:    f.iss,
		Subject:   f.sub,
		Audience:  f.aud,
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(exp),
		ID:        rand.Text(),
	}
	t := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	t.Header["kid"] = f.kid
	s, err := t.SignedString(f.key)
	if err != nil {
		return credential{}, fmt.Errorf("signing assertion: %w", err)
	}
	return credential{value: s, exp: claims.ExpiresAt.Time}, nil
}
