//go:build integration

package integration

import (
	"net"
	"sync"
	"time"
)

// faultProxy forwards TCP connections to an API server and puts the
// network's faults between the two, as a client sees them:
//   - cut closes every connection and refuses new ones (an outage, or a
//     partition that resets connections) until restore;
//   - refuse refuses new connections and leaves the open ones be;
//   - stall stops every byte in both directions, on open connections
//     and new ones alike, without closing anything (a partition that
//     drops packets) until release;
//   - setDelay holds every chunk of bytes for a while before passing it.
type faultProxy struct {
	ln     net.Listener
	target string

	// mu guards the fields below.
	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	down    bool
	refused bool
	gate    chan struct{} // closed when bytes may pass
	delay   time.Duration

	wg sync.WaitGroup
}

func newFaultProxy(target string) (*faultProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	open := make(chan struct{})
	close(open)
	p := &faultProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}, gate: open}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

func (p *faultProxy) addr() string { return p.ln.Addr().String() }

func (p *faultProxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.down || p.refused {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.mu.Unlock()
		up, err := net.DialTimeout("tcp", p.target, 5*time.Second)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		if p.down { // cut while dialing
			p.mu.Unlock()
			c.Close()
			up.Close()
			continue
		}
		p.conns[c], p.conns[up] = struct{}{}, struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(c, up)
		go p.pipe(up, c)
	}
}

// pipe copies src to dst through the proxy's faults, until either side
// closes.
func (p *faultProxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			gate, delay := p.gate, p.delay
			p.mu.Unlock()
			<-gate
			if delay > 0 {
				time.Sleep(delay)
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	dst.Close()
	src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}

// cut closes every connection and refuses new ones until restore.
func (p *faultProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
}

func (p *faultProxy) restore() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

// refuse refuses new connections, or with false accepts them again.
func (p *faultProxy) refuse(on bool) {
	p.mu.Lock()
	p.refused = on
	p.mu.Unlock()
}

// stall stops all bytes until release.
func (p *faultProxy) stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.gate:
		p.gate = make(chan struct{})
	default: // already stalled
	}
}

func (p *faultProxy) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.gate:
	default:
		close(p.gate)
	}
}

func (p *faultProxy) setDelay(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
}

func (p *faultProxy) close() {
	p.ln.Close()
	p.release()
	p.cut()
	p.wg.Wait()
}
