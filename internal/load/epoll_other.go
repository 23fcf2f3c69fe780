//go:build !linux

package load

import "errors"

// epollAvailable: EngineEpoll runs on Linux only.
const epollAvailable = false

func (e *engine) epollLoops() ([]func(), error) {
	return nil, errors.New("--engine epoll: Linux only")
}
