package webhooks

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/fundsvc/fundsvc/fund"
)

// Policy is where deliveries may go. By default only https URLs, and only
// to public addresses, decided when the connection is made (so a name that
// resolves to a private address later, DNS rebinding, is refused too).
type Policy struct {
	// AllowLoopback allows http:// URLs whose host is a loopback address
	// or localhost, and connections to loopback addresses: a development
	// and test setting (FUNDSVC_WEBHOOK_ALLOW_LOOPBACK).
	AllowLoopback bool
}

// blocked are the address ranges no delivery connects to, beside what
// netip's predicates name: shared address space (carrier-grade NAT, where
// some clouds put their metadata service), the "this network" block, and
// the benchmarking and documentation ranges.
var blocked = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("64:ff9b::/96"), // NAT64 can reach IPv4 private space
}

// ErrRefusedAddress is the error of a connection the policy refused.
var ErrRefusedAddress = errors.New("the address is not a public one")

// CheckAddress returns nil if a delivery may connect to ip.
func (p Policy) CheckAddress(ip netip.Addr) error {
	ip = ip.Unmap()
	switch {
	case ip.IsLoopback():
		if p.AllowLoopback {
			return nil
		}
		return fmt.Errorf("%w: %s is a loopback address", ErrRefusedAddress, ip)
	case ip.IsPrivate(), ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast(),
		ip.IsMulticast(), ip.IsUnspecified(), !ip.IsValid():
		return fmt.Errorf("%w: %s is a private, link-local (metadata) or special address", ErrRefusedAddress, ip)
	}
	for _, b := range blocked {
		if b.Contains(ip) {
			return fmt.Errorf("%w: %s is in %s", ErrRefusedAddress, ip, b)
		}
	}
	return nil
}

// CheckURL returns a message saying what is wrong with u as an endpoint
// URL, or "".
func (p Policy) CheckURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || !u.IsAbs() {
		return "must be an absolute URL"
	}
	if u.User != nil {
		return "must not carry credentials (user:password@)"
	}
	if u.Fragment != "" {
		return "must not have a fragment"
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !p.AllowLoopback || !isLoopbackHost(u.Hostname()) {
			return "must be https (plain http only to a loopback host, and only when the server sets FUNDSVC_WEBHOOK_ALLOW_LOOPBACK)"
		}
	default:
		return "must be https"
	}
	if ip, err := netip.ParseAddr(u.Hostname()); err == nil {
		if err := p.CheckAddress(ip); err != nil {
			return "must name a public host: " + strings.TrimPrefix(err.Error(), ErrRefusedAddress.Error()+": ")
		}
	}
	return ""
}

func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.IsLoopback()
}

// control refuses, at connect time, every address CheckAddress refuses.
func (p Policy) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrRefusedAddress, address)
	}
	return p.CheckAddress(ap.Addr())
}

// Client returns the HTTP client deliveries use: the policy's dialer, no
// proxy from the environment (a proxy would connect for us, past the
// check), no redirects followed, and timeout for the whole exchange.
func (p Policy) Client(timeout time.Duration) *http.Client {
	d := &net.Dialer{Timeout: min(timeout, 10*time.Second), Control: p.control}
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           d.DialContext,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: timeout,
			MaxIdleConnsPerHost:   4,
			IdleConnTimeout:       90 * time.Second,
			ForceAttemptHTTP2:     true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// maxResponseBytes is how much of an endpoint's answer is read (and then
// dropped): enough to reuse the connection, never an endpoint's whole body.
const maxResponseBytes = 4 << 10

func drain(r io.Reader) { _, _ = io.Copy(io.Discard, io.LimitReader(r, maxResponseBytes)) }

// NoAnswer is what the delivery log says of an attempt that got no HTTP
// answer, whatever stopped it: a refused address, a failed DNS lookup, a
// refused, reset or closed connection, a TLS failure, a timeout.
const NoAnswer = "no answer"

// noAnswer records in a that the endpoint did not answer: the log says
// NoAnswer and no latency, however the attempt failed, so an endpoint's
// log (which its administrator reads) cannot tell how a connection to an
// address went, as a port scan of the server's network would. The cause
// goes to the server's log at debug level, naming the endpoint by ID and
// never by URL, which may carry the receiver's token.
func (d *Deliverer) noAnswer(a *fund.WebhookAttempt, endpointID, eventID string, err error) {
	a.Error, a.LatencyMS = NoAnswer, 0
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // without the method and URL
	}
	d.Log.Debug("webhook attempt got no answer", "webhook", endpointID, "event", eventID, "cause", err.Error())
}
