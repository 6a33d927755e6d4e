package textproto

import "sync"

// A Pipeline orders the requests and responses of a connection that several
// goroutines share. Each exchange takes an id from Next; a goroutine then
// brackets sending its request with StartRequest(id) and EndRequest(id),
// and reading its response with StartResponse(id) and EndResponse(id).
// Start blocks until every lower id has ended, so requests go out and
// responses are read in id order.
//
// The zero Pipeline is ready to use.
type Pipeline struct {
	mu       sync.Mutex
	id       uint
	request  sequencer
	response sequencer
}

// Next returns the next id for a request/response pair.
func (p *Pipeline) Next() uint {
	p.mu.Lock()
	id := p.id
	p.id++
	p.mu.Unlock()
	return id
}

// StartRequest blocks until it is time to send (or, if this is a server,
// receive) the request with the given id.
func (p *Pipeline) StartRequest(id uint) { p.request.Start(id) }

// EndRequest notifies p that the request with the given id has been sent
// (or, if this is a server, received).
func (p *Pipeline) EndRequest(id uint) { p.request.End(id) }

// StartResponse blocks until it is time to receive (or, if this is a
// server, send) the response with the given id.
func (p *Pipeline) StartResponse(id uint) { p.response.Start(id) }

// EndResponse notifies p that the response with the given id has been
// received (or, if this is a server, sent).
func (p *Pipeline) EndResponse(id uint) { p.response.End(id) }

// A sequencer lets the holders of ids 0, 1, 2, ... run one at a time, in
// order. End of an id that is not the current one is a programming error
// and panics with "out of sync", as net/textproto does.
type sequencer struct {
	mu      sync.Mutex
	current uint
	waiters map[uint]chan struct{}
}

// Start waits until id is the current id.
func (s *sequencer) Start(id uint) {
	s.mu.Lock()
	if id == s.current {
		s.mu.Unlock()
		return
	}
	if s.waiters == nil {
		s.waiters = make(map[uint]chan struct{})
	}
	ch := make(chan struct{})
	s.waiters[id] = ch
	s.mu.Unlock()
	<-ch
}

// End finishes id, which must be the current id, and wakes the holder of
// the next id if it is waiting.
func (s *sequencer) End(id uint) {
	s.mu.Lock()
	if id != s.current {
		s.mu.Unlock()
		panic("out of sync")
	}
	s.current++
	ch, waiting := s.waiters[s.current]
	if waiting {
		delete(s.waiters, s.current)
	}
	s.mu.Unlock()
	if waiting {
		close(ch)
	}
}
