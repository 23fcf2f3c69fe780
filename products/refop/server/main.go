// Command refop is the reference OP: the example server of zitadel/oidc
// v3.52.0 (github.com/zitadel/oidc/v3/example/server) with one change, the
// listen address. The example binds ":"+PORT, every interface, and has no
// setting for it; this main binds 127.0.0.1:PORT, so its well-known demo
// credentials are not served beyond the machine. Everything else is the
// example's main as released: the same packages (config, exampleop,
// storage), the same environment (PORT, default 9998; USERS_FILE;
// REDIRECT_URI), the same clients, the issuer http://localhost:PORT/, the
// same routes and the same debug logging to stderr.
package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"

	"github.com/zitadel/oidc/v3/example/server/config"
	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
)

// listenHost is the only change from the example: loopback, not every interface.
const listenHost = "127.0.0.1"

func getUserStore(cfg *config.Config) (storage.UserStore, error) {
	if cfg.UsersFile == "" {
		return storage.NewUserStore(fmt.Sprintf("http://localhost:%s/", cfg.Port)), nil
	}
	return storage.StoreFromFile(cfg.UsersFile)
}

func main() {
	cfg := config.FromEnvVars(&config.Config{Port: config.DefaultIssuerPort})
	logger := slog.New(
		slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{
			AddSource: true,
			Level:     slog.LevelDebug,
		}),
	)

	// The example's issuer: localhost, whatever the listen address.
	issuer := fmt.Sprintf("http://localhost:%s/", cfg.Port)

	storage.RegisterClients(
		storage.NativeClient("native", cfg.RedirectURI...),
		storage.WebClient("web", "secret", cfg.RedirectURI...),
		storage.WebClient("api", "secret", cfg.RedirectURI...),
	)

	store, err := getUserStore(cfg)
	if err != nil {
		logger.Error("cannot create UserStore", "error", err)
		os.Exit(1)
	}
	stor := storage.NewStorage(store)
	router := exampleop.SetupServer(issuer, stor, logger, false)

	server := &http.Server{
		Addr:    net.JoinHostPort(listenHost, cfg.Port),
		Handler: router,
	}
	logger.Info("server listening, press ctrl+c to stop", "addr", issuer, "listen", server.Addr)
	if err := server.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		logger.Error("server terminated", "error", err)
		os.Exit(1)
	}
}
