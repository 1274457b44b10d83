//go:build integration

package integration

import (
	"io"
	"net"
	"sync"
)

// outageProxy forwards TCP connections to the apiserver, and can cut them
// all and refuse new ones, as an apiserver outage looks to a client: its
// watches break and, once the proxy resumes, it relists.
type outageProxy struct {
	ln     net.Listener
	target string

	// mu guards conns and down.
	mu    sync.Mutex
	conns map[net.Conn]struct{}
	down  bool
	wg    sync.WaitGroup
}

func newOutageProxy(target string) (*outageProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &outageProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

func (p *outageProxy) addr() string { return p.ln.Addr().String() }

func (p *outageProxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.down {
			p.mu.Unlock()
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns[c], p.conns[up] = struct{}{}, struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(c, up)
		go p.pipe(up, c)
	}
}

func (p *outageProxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	_, _ = io.Copy(dst, src)
	dst.Close()
	src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}

// cut closes every connection and refuses new ones until restore.
func (p *outageProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
}

func (p *outageProxy) restore() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

func (p *outageProxy) close() {
	p.cut()
	p.ln.Close()
	p.wg.Wait()
}
