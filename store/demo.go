package store

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/fund"
)

// SeedDemo loads the demo dataset (fund.DemoVersions and fund.DemoRecords)
// unless its documents and records already exist, so it can run on every
// start. It returns how many versions
// it wrote.
func (s *Store) SeedDemo(ctx context.Context) (int, error) {
	written := 0
	seen := map[string]int{}
	for _, d := range fund.DemoVersions() {
		if _, err := s.latestRecord(ctx, d.ID); err == nil && seen[d.ID] == 0 {
			continue // seeded before
		} else if err != nil && fund.ErrorCode(err) != fund.ENOTFOUND {
			return written, err
		}
		expect := seen[d.ID]
		d.CreatedBy = "fundsvc seed"
		if _, err := s.Restate(ctx, d, &expect); err != nil {
			return written, fmt.Errorf("seed %s: %w", d.ID, err)
		}
		seen[d.ID]++
		written++
	}
	// The records are created once: a record an administrator replaced
	// since is left as it is.
	create := 0
	funds, investors := fund.DemoRecords()
	for _, f := range funds {
		if _, err := s.PutFundRecord(ctx, f.ID, f.FundFields, &create, "fundsvc seed", s.Now()); err != nil && fund.ErrorCode(err) != fund.EPRECONDITION {
			return written, fmt.Errorf("seed the record of fund %s: %w", f.ID, err)
		}
	}
	for _, i := range investors {
		if _, err := s.PutInvestorRecord(ctx, i.ID, i.InvestorFields, &create, "fundsvc seed", s.Now()); err != nil && fund.ErrorCode(err) != fund.EPRECONDITION {
			return written, fmt.Errorf("seed the record of investor %s: %w", i.ID, err)
		}
	}
	return written, nil
}

// ResetDemo restores the demo dataset on a running local stack: it deletes
// the table, waits until it is gone, creates it again (CreateTable waits
// until it is active) and seeds the demo, returning how many versions it
// wrote. Everything else the table held is lost, which is the point: the
// tour (docs/tour.md) writes to the demo.
//
// It refuses, deleting nothing, unless the store's DynamoDB endpoint is a
// loopback address (DynamoDB Local, as make run starts it): the endpoint
// is read from the SDK client NewDB made, the one every request goes to,
// so no setting elsewhere can make it disagree. A store with no endpoint
// (AWS itself), any other host, or a client NewDB did not make is refused
// with EINVALID.
//
// A serve process on the table answers errors while the table is missing
// and the demo afterwards; it needs no restart.
func (s *Store) ResetDemo(ctx context.Context) (int, error) {
	if err := s.checkLocalEndpoint(); err != nil {
		return 0, err
	}
	_, err := s.db.Client().DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(s.name)})
	var missing *types.ResourceNotFoundException
	if err != nil && !errors.As(err, &missing) {
		return 0, fmt.Errorf("reset the demo: delete table %s: %w", s.name, err)
	}
	// DynamoDB Local deletes at once; poll briefly rather than the SDK's
	// 20-second default delay, which is for AWS.
	gone := dynamodb.NewTableNotExistsWaiter(s.db.Client(), func(o *dynamodb.TableNotExistsWaiterOptions) {
		o.MinDelay, o.MaxDelay = 50*time.Millisecond, time.Second
	})
	if err := gone.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s.name)}, 2*time.Minute); err != nil {
		return 0, fmt.Errorf("reset the demo: wait for table %s to be deleted: %w", s.name, err)
	}
	// The new table has no record of the change index's shard count yet.
	s.shards.mu.Lock()
	s.shards.recorded = 0
	s.shards.mu.Unlock()
	if err := s.CreateTable(ctx); err != nil {
		return 0, fmt.Errorf("reset the demo: %w", err)
	}
	return s.SeedDemo(ctx)
}

// checkLocalEndpoint returns EINVALID unless the store's client sends its
// requests to a loopback address.
func (s *Store) checkLocalEndpoint() error {
	refuse := func(why string) error {
		return fund.Errorf(fund.EINVALID, "refusing to reset table %s: %s; the demo is reset only on DynamoDB Local at a loopback address", s.name, why)
	}
	mc, ok := s.db.Client().(meteredClient)
	if !ok {
		return refuse("its DynamoDB client was not made by store.NewDB, so its endpoint is unknown")
	}
	endpoint := mc.Client.Options().BaseEndpoint
	if endpoint == nil || *endpoint == "" {
		return refuse("it talks to AWS (no endpoint is configured)")
	}
	u, err := url.Parse(*endpoint)
	if err != nil || u.Hostname() == "" {
		return refuse(fmt.Sprintf("its endpoint %q is not a URL", *endpoint))
	}
	if host := u.Hostname(); host != "localhost" {
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			return refuse(fmt.Sprintf("its endpoint %s is not a loopback address", *endpoint))
		}
	}
	return nil
}
