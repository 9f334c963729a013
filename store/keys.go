package store

import (
	"github.com/fundsvc/fundsvc/fund"

	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"
)

// Every key string of the single table is built here and nowhere else.
// IDs are validated before they reach these functions, so none contains '#'
// and no key can be forged from another entity's ID.

// Attribute and index names of the table.
const (
	AttrPK     = "PK"
	AttrSK     = "SK"
	AttrGSI1PK = "GSI1PK"
	AttrGSI1SK = "GSI1SK"
	AttrGSI2PK = "GSI2PK"
	AttrGSI2SK = "GSI2SK"
	IndexGSI1  = "GSI1"
	IndexGSI2  = "GSI2"
)

// Entity names stored in every item's Type attribute.
const (
	TypeHead               = "Head"
	TypeDocument           = "Document"
	TypeCapitalActivity    = "CapitalActivity"
	TypeCapitalAccount     = fund.TypeCapitalAccount // the position items' names are the domain's
	TypeCapitalCall        = fund.TypeCapitalCall
	TypeDistribution       = fund.TypeDistribution
	TypeUnfundedCommitment = fund.TypeUnfundedCommitment
	TypeFund               = "Fund"
	TypePosition           = "Position"
	TypeDocumentIndex      = "DocumentIndex"
	TypeIdempotency        = "IdempotencyRecord"
	TypePositionClaim      = "PositionClaim"
	TypeClaimFence         = "ClaimFence"
	TypePositionLedger     = "PositionLedger"
	TypeChangeShards       = "ChangeShards"
	TypeCursorKey          = "CursorKey"
	TypeFundRecord         = "FundRecord"
	TypeInvestorRecord     = "InvestorRecord"
	TypeFundInvestor       = "FundInvestor"
	TypeEvent              = "Event"
	TypeEventPart          = "EventPart"
	TypeEventsStart        = "EventsStart"
	// One entry per committed version in its document's instant index
	// (VersionInstantSK). No reader of documents or the export knows them.
	TypeVersionInstant = "VersionInstant"
	TypeRecordInstant  = "RecordInstant" // a record version's, likewise
	// One immutable item per version of a fund's or an investor's record
	// (knownat_records.go). No reader of documents or the export knows them.
	TypeFundRecordVersion     = "FundRecordVersion"
	TypeInvestorRecordVersion = "InvestorRecordVersion"
)

// Document partition.

// DocPK is the partition of everything about one document.
func DocPK(doc string) string { return "DOC#" + doc }

// HeadSK is the commit head: the first item of the document partition, so
// that any Query from the start of the partition reads it before any other.
const HeadSK = "#HEAD"

// DocumentLatestSK is the latest document.
const DocumentLatestSK = "DOCUMENT#LATEST"

// History records: the immutable document record and capital activity of
// every committed version, written by its commit. They are keyed by
// version under prefixes that begin with '~', the last printable ASCII
// character, so they sort after every item of the latest view: a Query of
// the latest view (SK < HistoryStart) reads no history record however
// often the document was restated, and a Query of one prefix reads a
// range of versions, newest first when asked.
const HistoryStart = "~"

// DocumentVersionPrefix and ActivityVersionPrefix begin the history records
// of documents and of capital activities.
const (
	DocumentVersionPrefix = "~DOCUMENT#"
	ActivityVersionPrefix = "~CAPITAL_ACTIVITY#"
)

// DocumentVersionSK is the history record of one version of a document;
// versions are zero-padded so they sort numerically.
func DocumentVersionSK(version int) string {
	return fmt.Sprintf("%s%010d", DocumentVersionPrefix, version)
}

// ActivityVersionSK is the capital activity of one version.
func ActivityVersionSK(version int) string {
	return fmt.Sprintf("%s%010d", ActivityVersionPrefix, version)
}

// MaxVersion is the greatest version number a key holds (ten digits).
const MaxVersion = 9_999_999_999

// VersionRange returns inclusive bounds of the history records under
// prefix (DocumentVersionPrefix or ActivityVersionPrefix) of versions from
// lo to hi.
func VersionRange(prefix string, lo, hi int) (string, string) {
	return fmt.Sprintf("%s%010d", prefix, max(lo, 0)), fmt.Sprintf("%s%010d", prefix, max(hi, 0))
}

// VersionOfSK returns the version a history record's sort key names; ok
// is false for any other key.
func VersionOfSK(sk string) (version int, ok bool) {
	i := strings.LastIndexByte(sk, '#')
	if i < 0 || len(sk)-i-1 != 10 {
		return 0, false
	}
	v, err := strconv.Atoi(sk[i+1:])
	return v, err == nil
}

// The change index (changes.go): the commit head of every document carries,
// in GSI1, the UTC day and shard of its latest commit as partition key and
// the commit instant and document as sort key, so the documents changed in
// a period are found by Queries over that period's days and shards.

// ChangesGSI1PK is the change-index partition of one UTC day and shard.
func ChangesGSI1PK(day time.Time, shard int) string {
	return "CHANGES#" + day.UTC().Format(time.DateOnly) + "#" + strconv.Itoa(shard)
}

// ChangesGSI1SK orders a day's changes by commit instant, then document.
func ChangesGSI1SK(committedAt time.Time, doc string) string {
	return changeInstant(committedAt) + "#" + doc
}

// ChangesRange returns inclusive bounds of the sort keys of the commits
// with since < instant <= until: no sort key equals a bound ('$' sorts
// right after the '#' that follows the instant in every key).
func ChangesRange(since, until time.Time) (lo, hi string) {
	return changeInstant(since) + "$", changeInstant(until) + "$"
}

// changeInstant is an instant in UTC, fixed width with nanoseconds, so that
// sort keys sort in time order.
func changeInstant(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000000Z") }

// ChangeShard is the shard of a document's changes among shards: a stable
// hash (FNV-1a) of its ID, the same in every process and release.
func ChangeShard(doc string, shards int) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(doc))
	return int(h.Sum32() % uint32(max(shards, 1)))
}

// ChangeShardsPK and ChangeShardsSK key the record of the largest shard
// count any process has written the change index with. It carries no index
// keys, and its Type is no entity any reader or the export knows.
const (
	ChangeShardsPK = "CHANGES"
	ChangeShardsSK = "SHARDS"
)

// The event feed (events.go): one item per committed version, written by
// its commit, keyed by document and version, and indexed by the commit's
// instant twice: across every fund in GSI1, under the UTC day and shard
// (as the change index), and per fund in GSI2, under the UTC month.

// EventPK is the partition of one document's events, one per version.
func EventPK(doc string) string { return "EVENT#" + doc }

// EventSK is the event of one version; zero-padded so versions sort.
func EventSK(version int) string { return fmt.Sprintf("VERSION#%010d", version) }

// EventPartPK is the partition of the parts of one commit's event whose
// touched positions are too large for its item (events.go). It is keyed by
// the commit ID, so an attempt that lost its flip leaves no part that a
// later commit of the same version number could read.
func EventPartPK(doc, commitID string) string { return "EVENTPART#" + doc + "#" + commitID }

// EventPartSK is one part of an event; zero-padded so parts sort in order.
func EventPartSK(n int) string { return fmt.Sprintf("PART#%04d", n) }

// VersionInstantSK is a version's entry in its document's instant index,
// in the partition of its events (EventPK), keyed by its commit instant:
// UTC to the nanosecond, fixed width, so entries sort by instant and sort
// below the events' keys. A document's instants rise with its versions,
// so the entry at or before an instant is the version known then.
func VersionInstantSK(at time.Time) string {
	return VersionInstantLowSK + changeInstant(at)
}

// VersionInstantLowSK is below every entry of the instant index.
const VersionInstantLowSK = "AT#"

// EventsGSI1PK is the feed's partition of one UTC day and shard, across
// every fund.
func EventsGSI1PK(day time.Time, shard int) string {
	return "EVENTS#" + day.UTC().Format(time.DateOnly) + "#" + strconv.Itoa(shard)
}

// FundEventsGSI2PK is the feed's partition of one fund and UTC month.
func FundEventsGSI2PK(fundID string, month time.Time) string {
	return "FUND_EVENTS#" + fundID + "#" + month.UTC().Format("2006-01")
}

// EventOrderSK orders events by commit instant, then document, then
// version: the sort key of an event in both indexes.
func EventOrderSK(committedAt time.Time, doc string, version int) string {
	return fmt.Sprintf("%s#%s#%010d", changeInstant(committedAt), doc, version)
}

// EventsAfterSK is the lowest sort key strictly after every event at or
// before instant at ('$' sorts right after '#').
func EventsAfterSK(at time.Time) string { return changeInstant(at) + "$" }

// EventsStartPK and EventsStartSK key the record of the earliest instant
// any process may have committed an event at: where a replay from the
// beginning starts. It carries no index keys.
const (
	EventsStartPK = "EVENTS"
	EventsStartSK = "START"
)

// CapitalActivityLatestSK is the latest capital activity.
const CapitalActivityLatestSK = "CAPITAL_ACTIVITY#LATEST"

// CapitalPrefix is shared by capital activities, capital calls and capital
// account statements.
const CapitalPrefix = "CAPITAL_"

// CapitalRange returns inclusive bounds that select the commit head and every
// item whose sort key begins with "CAPITAL_" (capital account statements
// among them): nothing sorts between the head and "CAPITAL_", and '`' is the
// character after '_'.
func CapitalRange() (lo, hi string) { return HeadSK, "CAPITAL`" }

// PositionItemSK is a position's latest item of kind k in a document.
func PositionItemSK(k fund.ItemKind, pos string) string { return string(k) + "#" + pos }

// StatementPrefix selects every capital account statement of a document's
// latest view, by position.
const StatementPrefix = string(fund.Statement) + "#"

// Index entries of position items (GSI1: entity-document, GSI2: position pivot).

// PositionItemGSI1PK is unique per (kind, position, document).
func PositionItemGSI1PK(k fund.ItemKind, pos, doc string) string {
	return string(k) + "#" + pos + "#" + doc
}

// GSI1LatestSK is the sort key of every position item in GSI1.
const GSI1LatestSK = "LATEST"

// DocumentLatestGSI1PK finds a document's latest item in GSI1.
func DocumentLatestGSI1PK(doc string) string { return "DOCUMENT#LATEST#" + doc }

// DocumentLatestGSI1SK is the GSI1 sort key of a latest document.
const DocumentLatestGSI1SK = "METADATA"

// PositionGSI2PK pivots a position's items across documents.
func PositionGSI2PK(pos string) string { return "POSITION#" + pos }

// PositionItemGSI2SK orders a position's items by kind, then document.
func PositionItemGSI2SK(k fund.ItemKind, doc string) string { return string(k) + "#" + doc }

// PositionKindPrefix selects one kind of a position's items in GSI2; the
// trailing '#' ends the kind so no kind is a prefix of another.
func PositionKindPrefix(k fund.ItemKind) string { return string(k) + "#" }

// Version partitions: the immutable items of one committed (or staged) version.

// VersionPK is the partition of one version's items. The commit ID is derived
// from the version number and the content, so two writers racing for the same
// version number never write into each other's partition.
func VersionPK(doc, commitID string) string { return "VERSION#" + doc + "#" + commitID }

// ParseVersionPK splits a version partition key into its document and
// commit IDs; ok is false for any other key.
func ParseVersionPK(pk string) (doc, commitID string, ok bool) {
	rest, found := strings.CutPrefix(pk, "VERSION#")
	if !found {
		return "", "", false
	}
	doc, commitID, ok = strings.Cut(rest, "#")
	return doc, commitID, ok && doc != "" && commitID != ""
}

// VersionDocumentSK and VersionCapitalActivitySK are a version's document-level items.
const (
	VersionDocumentSK        = "DOCUMENT"
	VersionCapitalActivitySK = "CAPITAL_ACTIVITY"
)

// VersionPositionPrefix selects one position's items of a version; the
// trailing '#' keeps POSITION_1 from matching POSITION_10.
func VersionPositionPrefix(pos string) string { return "POS#" + pos + "#" }

// VersionPositionItemSK groups a version's items by position.
func VersionPositionItemSK(pos string, k fund.ItemKind) string {
	return VersionPositionPrefix(pos) + string(k)
}

// VersionPositionsPrefix selects every position item of a version.
const VersionPositionsPrefix = "POS#"

// Fund partition.

// FundPK is the partition of a fund's collection items.
func FundPK(fund string) string { return "FUND#" + fund }

// FundSK is the fund item itself.
const FundSK = "FUND"

// RecordSK is the sort key of a fund's or an investor's record.
const RecordSK = "RECORD"

// RecordVersionSK is the immutable item of one version of a fund's or an
// investor's record, beside the record in its partition; zero-padded so
// versions sort. No other sort key of a fund's or an investor's partition
// begins with "RECORD#".
func RecordVersionSK(version int) string { return fmt.Sprintf("RECORD#%010d", version) }

// RecordInstantSK is a record version's entry in its record's instant
// index, in the record's partition, keyed by the instant the version was
// written (as VersionInstantSK keys a document version's); RecordInstantLowSK
// is below every entry. The entries sort apart from the versions' items.
func RecordInstantSK(at time.Time) string {
	return RecordInstantLowSK + changeInstant(at)
}

// RecordInstantLowSK: see RecordInstantSK.
const RecordInstantLowSK = "RECORD_AT#"

// InvestorPK is the partition of an investor's record.
func InvestorPK(inv string) string { return "INVESTOR#" + inv }

// FundInvestorSK notes, in a fund's partition, that the investor holds a
// position of the fund.
func FundInvestorSK(inv string) string { return "INVESTOR#" + inv }

// FundInvestorPrefix selects every investor noted in a fund.
const FundInvestorPrefix = "INVESTOR#"

// RegistryShards is how many GSI1 partitions the registries of funds and of
// investors are spread over: every document commit writes its fund's item
// and every new position its investor's note, so one partition would be hot.
const RegistryShards = 8

// FundsGSI1PK is the registry partition of a fund's items (its fund item
// and its record).
func FundsGSI1PK(fundID string) string { return FundsShardGSI1PK(ChangeShard(fundID, RegistryShards)) }

// FundsShardGSI1PK is one partition of the funds' registry.
func FundsShardGSI1PK(shard int) string { return "FUNDS#" + strconv.Itoa(shard) }

// FundRecordGSI1SK and FundItemGSI1SK order a fund's items in its registry
// partition, the record first: what follows the fund's ID is "#" and then
// nothing or FUND, and "#" sorts before every character of an ID.
func FundRecordGSI1SK(fundID string) string { return "FUND#" + fundID + "#" }
func FundItemGSI1SK(fundID string) string   { return "FUND#" + fundID + "#FUND" }

// InvestorsGSI1PK is the registry partition of an investor's items (its
// record and its notes in funds).
func InvestorsGSI1PK(inv string) string {
	return InvestorsShardGSI1PK(ChangeShard(inv, RegistryShards))
}

// InvestorsShardGSI1PK is one partition of the investors' registry.
func InvestorsShardGSI1PK(shard int) string { return "INVESTORS#" + strconv.Itoa(shard) }

// InvestorRecordGSI1SK and FundInvestorGSI1SK order an investor's items in
// its registry partition: the record first, then one note per fund.
func InvestorRecordGSI1SK(inv string) string { return "INVESTOR#" + inv + "#" }
func FundInvestorGSI1SK(inv, fundID string) string {
	return "INVESTOR#" + inv + "#FUND#" + fundID
}

// FundPositionSK registers one position of the fund.
func FundPositionSK(pos string) string { return "POSITION#" + pos }

// FundPositionPrefix selects every position of a fund.
const FundPositionPrefix = "POSITION#"

// PositionClaimPK and PositionClaimSK key the one item that ties a position
// ID, globally, to its fund and investor.
func PositionClaimPK(pos string) string { return "POSITION#" + pos }

// PositionClaimSK is the sort key of a position's claim.
const PositionClaimSK = "CLAIM"

// PositionLedgerSK keys, in the position's claim partition
// (PositionClaimPK), the ledger entry of one document that has reported the
// position in some version (ledger.go).
func PositionLedgerSK(doc string) string { return PositionLedgerPrefix + doc }

// PositionLedgerPrefix selects the ledger entries of a position's claim
// partition: it sorts after PositionClaimSK, so a Query of the partition
// reads the claim first.
const PositionLedgerPrefix = "DOCUMENT#"

// ClaimFencePK is the fence of one staged version's position claims: its
// commit is possible only while the fence is not revoked (see claims.go).
func ClaimFencePK(doc, commitID string) string { return "FENCE#" + doc + "#" + commitID }

// ClaimFenceSK is the sort key of a claim fence.
const ClaimFenceSK = "FENCE"

// InvestorGSI2PK pivots a registered position by investor.
func InvestorGSI2PK(inv string) string { return "INVESTOR#" + inv }

// InvestorPositionGSI2SK orders an investor's positions.
func InvestorPositionGSI2SK(pos string) string { return "POSITION#" + pos }

// FundDocumentSK indexes a document in its fund by asOf date.
func FundDocumentSK(asOf fund.Date, doc string) string { return "DOC#" + asOf.String() + "#" + doc }

// FundDocumentRange returns inclusive bounds selecting the fund's documents
// with from <= asOf <= to (either may be zero for an open end).
func FundDocumentRange(from, to fund.Date) (lo, hi string) {
	lo, hi = "DOC#0", "DOC#9~"
	if !from.IsZero() {
		lo = "DOC#" + from.String()
	}
	if !to.IsZero() {
		hi = "DOC#" + to.String() + "$"
	}
	return lo, hi
}

// Idempotency records: one partition per (principal, key), so keys of
// different callers never meet. The key is hashed, so no caller-chosen
// string ever becomes part of a key.

// IdempotencyPK is the partition of one idempotency key of one principal.
func IdempotencyPK(scope, key string) string {
	sum := sha256.Sum256([]byte(scope + "\x1f" + key))
	return "IDEMPOTENCY#" + hex.EncodeToString(sum[:])
}

// IdempotencyRecordSK is the record; IdempotencyBodySK the i-th chunk of the
// stored response body.
const IdempotencyRecordSK = "RECORD"

// IdempotencyBodySK is the sort key of the i-th chunk of the body stored by
// one owner (claim) of the key: owners never share a chunk, so a stale owner
// cannot overwrite the body of the owner that completed the record.
func IdempotencyBodySK(owner string, i int) string {
	return fmt.Sprintf("%s%04d", IdempotencyBodyPrefix(owner), i)
}

// IdempotencyBodyPrefix begins the sort keys of every chunk of one owner.
func IdempotencyBodyPrefix(owner string) string { return "BODY#" + owner + "#" }

// CursorKeyPK and CursorKeySK key the key that seals the pagination
// cursors of every instance serving the table (cursorkey.go). It carries no
// index keys, and its Type is no entity any reader or the export knows.
const (
	CursorKeyPK = "CURSORKEY"
	CursorKeySK = "KEY"
)

// PingPK is the partition and sort key that readiness checks read: no item
// is ever written there.
const PingPK = "#PING"

// AttrExpiresAt is the table's TTL attribute (epoch seconds).
const AttrExpiresAt = "ExpiresAt"

// Export lease (export/lease.go): one item per snapshot date, so that two
// exports of one date never run at once. It carries no index keys, and its
// Type is no entity any reader or the export's classification knows, so
// every reader passes over it.

// TypeExportLease is the Type of an export lease.
const TypeExportLease = "ExportLease"

// ExportLeasePK is the partition of the export lease of one snapshot date.
func ExportLeasePK(date fund.Date) string { return "EXPORT#" + date.String() }

// ExportLeaseSK is the sort key of an export lease.
const ExportLeaseSK = "LEASE"

// Webhooks (store/webhooks.go): the endpoints in one partition, small by
// nature (an administrator's subscriptions), so listing them is one Query,
// beside the feed cursor every endpoint's queue is filled up to and one
// work marker per endpoint; each endpoint's delivery log and pending
// queue in its own partition. None carries index keys, and their Types
// are no entity any reader or the export knows.
const (
	TypeWebhookEndpoint = "WebhookEndpoint"
	TypeWebhookCursor   = "WebhookCursor"
	TypeWebhookDelivery = "WebhookDelivery"
	TypeWebhookPending  = "WebhookPending"
	TypeWebhookWork     = "WebhookWork"
	TypeWebhookCount    = "WebhookEndpointCount"
	TypeWebhookPurge    = "WebhookPurge"
)

// WebhooksPK is the partition of every webhook endpoint.
const WebhooksPK = "WEBHOOKS"

// WebhookEndpointSK is the sort key of an endpoint in WebhooksPK.
func WebhookEndpointSK(id string) string { return "ENDPOINT#" + id }

// WebhookEndpointPrefix begins every WebhookEndpointSK.
const WebhookEndpointPrefix = "ENDPOINT#"

// WebhookFillSK is the sort key, in WebhooksPK, of the feed cursor up to
// which every endpoint's queue is filled.
const WebhookFillSK = "FILL"

// WebhookCountSK is the sort key, in WebhooksPK, of the number of
// endpoints naming fundID; "" counts the endpoints of every fund.
func WebhookCountSK(fundID string) string {
	if fundID == "" {
		return "COUNT#*" // no fund ID holds '*'
	}
	return "COUNT#" + fundID
}

// WebhookPurgeSK is the sort key, in WebhooksPK, of a deleted endpoint
// whose partition (WebhookPK) is still to be emptied.
func WebhookPurgeSK(id string) string { return "PURGE#" + id }

// WebhookPurgePrefix begins every WebhookPurgeSK.
const WebhookPurgePrefix = "PURGE#"

// WebhookWorkSK is the sort key, in WebhooksPK, of an endpoint's work
// marker: when a delivery of its queue is next due.
func WebhookWorkSK(id string) string { return "WORK#" + id }

// WebhookWorkPrefix begins every WebhookWorkSK.
const WebhookWorkPrefix = "WORK#"

// WebhookPK is the partition of one endpoint's deliveries and pending
// queue.
func WebhookPK(id string) string { return "WEBHOOK#" + id }

// WebhookDeliverySK is the sort key of the delivery of one event.
func WebhookDeliverySK(eventID string) string { return "DELIVERY#" + eventID }

// WebhookDeliveryPrefix begins every WebhookDeliverySK.
const WebhookDeliveryPrefix = "DELIVERY#"

// WebhookPendingSK is the sort key of an undelivered event in the pending
// queue: by document, then version (zero-padded), so the first of a
// document's entries is the one to deliver next.
func WebhookPendingSK(orderKey string, version int, eventID string) string {
	return fmt.Sprintf("PENDING#%s#%010d#%s", orderKey, version, eventID)
}

// WebhookPendingPrefix begins every WebhookPendingSK.
const WebhookPendingPrefix = "PENDING#"
