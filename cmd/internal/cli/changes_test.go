package cli

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/store"
)

func TestChangesBackfillIndexesTheDemoAndResumes(t *testing.T) {
	e := fundtest.New(t)
	e.Seed(t)
	ctx := context.Background()
	raw := dynamodb.NewFromConfig(dynamotest.Shared().Config())
	var heads []map[string]types.AttributeValue
	for _, it := range e.Dump(t) {
		if sk, _ := it[store.AttrSK].(*types.AttributeValueMemberS); sk != nil && sk.Value == store.HeadSK {
			heads = append(heads, it)
			if _, err := raw.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(e.Table),
				Key:              map[string]types.AttributeValue{store.AttrPK: it[store.AttrPK], store.AttrSK: it[store.AttrSK]},
				UpdateExpression: aws.String("REMOVE GSI1PK, GSI1SK, CommittedAt")}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(heads) < 3 {
		t.Fatalf("the demo has %d heads", len(heads))
	}
	base := env(t, e.Table)
	getenv := func(k string) string {
		if k == "FUNDSVC_CHANGE_SHARDS" {
			return "3"
		}
		return base(k)
	}
	var out bytes.Buffer
	if err := run(ctx, []string{"changes", "backfill", "--page-items", "5"}, getenv, &out); err != nil {
		t.Fatalf("backfill: %v\n%s", err, out.String())
	}
	points := regexp.MustCompile(`to resume: fundsvc changes backfill --resume (\S+)`).FindAllStringSubmatch(out.String(), -1)
	if len(points) < 2 || !strings.Contains(out.String(), "indexed "+strconv.Itoa(len(heads))+", kept 0") {
		t.Fatalf("backfill of %d stripped heads printed:\n%s", len(heads), out.String())
	}
	for _, it := range e.Dump(t) {
		sk, _ := it[store.AttrSK].(*types.AttributeValueMemberS)
		pk, _ := it[store.AttrGSI1PK].(*types.AttributeValueMemberS)
		if sk != nil && sk.Value == store.HeadSK && (pk == nil || !regexp.MustCompile(`^CHANGES#2026-01-02#[0-2]$`).MatchString(pk.Value)) {
			t.Errorf("head %v is indexed under %v, want one of FUNDSVC_CHANGE_SHARDS=3 shards of the demo's day", it[store.AttrPK], pk)
		}
	}
	cs, err := e.Store.ChangedSince(ctx, fundtest.Clock.Add(-time.Second), fundtest.Clock)
	if err != nil || len(cs) != len(heads) {
		t.Fatalf("after the backfill the index finds %d of %d documents: %v", len(cs), len(heads), err)
	}

	// Resuming from a point printed midway, and starting again, both
	// find everything done.
	for _, args := range [][]string{{"--resume", points[0][1]}, nil} {
		out.Reset()
		if err := run(ctx, append([]string{"changes", "backfill"}, args...), getenv, &out); err != nil || !strings.Contains(out.String(), "indexed 0,") {
			t.Fatalf("backfill again %v: %v\n%s", args, err, out.String())
		}
	}
	if err := run(ctx, []string{"changes", "backfill", "--resume", "nonsense"}, getenv, &out); err == nil || !strings.Contains(err.Error(), "resume") {
		t.Fatalf("a made-up resume point: %v", err)
	}
	if err := run(ctx, []string{"changes"}, getenv, &out); err == nil || !strings.Contains(err.Error(), "backfill") {
		t.Fatalf("changes without a subcommand: %v", err)
	}
}
