package api

import (
	"cmp"
	"fmt"
	"math"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/imports"
	"github.com/fundsvc/fundsvc/positions"
	"github.com/fundsvc/fundsvc/wire"
)

// What the OpenAPI document says beside the shapes of the Go types: the
// descriptions of schemas and their members, parameters, headers and error
// answers, and the few rules a Go type cannot carry (an ID is a string of a
// pattern, a member is required in a request).

// field describes one member of a schema, keyed "Schema.member".
type field struct {
	Ref      string  // a named schema (scalarSchemas) instead of the Go type's
	Schema   *schema // a schema of its own instead of the Go type's
	Required bool    // always present: in a request no member is required unless marked
	Optional bool    // in a response, a member that is not always present
	Default  any
	// Derive computes the schema when the document is generated, from
	// tables filled in by init functions.
	Derive func() *schema
}

// typeSpec describes one schema.
type typeSpec struct {
	Doc string
	// MinProperties is the least number of members an object has. A
	// position's three (its two IDs and at least one item) say "at least one
	// item" in a form that generators of typed clients read, where an anyOf
	// of required sets made openapi-typescript give up on the type.
	MinProperties int
	Examples      []any
}

type parameterSpec struct {
	// Name is the parameter's name when it differs from its key in
	// apiParameters: fundId is a path parameter of /v1/funds/{fundId} and
	// a query parameter of /v1/investors.
	Name   string
	In     string // path, query or header
	Doc    string
	Type   any     // a value whose Go type gives the schema, or
	Schema *schema // the schema
}

type headerSpec struct {
	Doc    string
	Schema *schema
}

// errorResponse is a problem answer; its status is statusOf[Code].
type errorResponse struct {
	Code, Doc     string
	Detail, Field string   // of its example
	Headers       []string // beyond X-Request-ID and Cache-Control
}

// errorResponseOf names the error answer of each status an operation may declare.
var errorResponseOf = map[int]string{
	http.StatusBadRequest: "BadRequest", http.StatusUnauthorized: "Unauthorized", http.StatusForbidden: "Forbidden",
	http.StatusNotFound: "NotFound", http.StatusConflict: "Conflict", http.StatusPreconditionFailed: "PreconditionFailed",
	http.StatusPreconditionRequired:  "PreconditionRequired",
	http.StatusRequestEntityTooLarge: "PayloadTooLarge", http.StatusUnsupportedMediaType: "UnsupportedMediaType",
	http.StatusUnprocessableEntity: "IdempotencyKeyReused", http.StatusTooManyRequests: "TooManyRequests",
	http.StatusInternalServerError: "InternalError", http.StatusServiceUnavailable: "Unavailable",
}

// encodesAs gives the types that decode themselves the Go type of the JSON
// they read.
var encodesAs = map[reflect.Type]reflect.Type{
	reflect.TypeFor[wire.PositionList](): reflect.TypeFor[[]fund.Position](),
}

// schemaNames names the schemas whose Go names do not say it.
var schemaNames = map[reflect.Type]string{
	reflect.TypeFor[fund.CapitalCallItem]():        "CapitalCall",
	reflect.TypeFor[fund.DistributionItem]():       "Distribution",
	reflect.TypeFor[fund.UnfundedCommitmentItem](): "UnfundedCommitment",
}

// conventions give string and integer members their named schema by their
// JSON name, wherever they appear.
var conventions = map[string]string{
	"documentId": "Id", "fundId": "Id", "investorId": "Id", "positionId": "Id",
	"asOf": "Date", "dueDate": "Date", "paymentDate": "Date", "activityDate": "Date", "effectiveDate": "Date",
	"firstAsOf": "Date", "lastAsOf": "Date", "periodStart": "Date", "periodEnd": "Date",
	"currency": "Currency", "baseCurrency": "Currency",
	"inceptionDate": "Date",
	"investorType":  "InvestorType",
	"version":       "Version", "documentVersion": "Version",
	"next": "Cursor",
	"kind": "DocumentKind",
}

var apiTypes = map[string]typeSpec{
	"FundRequest":             {Doc: "A fund's whole record: what `PUT /v1/funds/{fundId}` stores as the record's next version. Server-owned members (`fundId`, `version`, `updatedAt`, `updatedBy`) have no place here; unknown members, `null`, a number written with a fraction or an exponent where a whole number is due, and trailing data are refused with 400 naming the member."},
	"InvestorRequest":         {Doc: "An investor's whole record: what `PUT /v1/investors/{investorId}` stores as the record's next version (see `FundRequest`)."},
	"Fund":                    {Doc: "A fund: its ID and, once an administrator has put one, its record with the record's version. A fund that documents name but that has no record is answered with `fundId` alone."},
	"Investor":                {Doc: "An investor: its ID and, once an administrator has put one, its record with the record's version. An investor that documents name but that has no record is answered with `investorId` alone."},
	"EventFeed":               {Doc: "One page of the event feed, complete up to its `watermark`."},
	"Event":                   {Doc: "One committed version of a document: the payload of Standard Webhooks 1.0 (`type`, `timestamp`, `data`) that a webhook delivers, with the event's `id`. `type` is named as the standard names it, the one member besides RFC 9457's problem named by the bare word. It names what changed, never an amount."},
	"EventData":               {Doc: "The version an event announces; read it whole at `versionPath`."},
	"EventPosition":           {Doc: "A position a version touched, and how; never its amounts."},
	"DocumentRequest":         {Doc: "One whole version of a document: what `PUT /v1/documents/{documentId}` stores as the document's next version. Server-owned fields (`documentId`, `version`, `createdAt`) have no place here. Unknown fields are refused with 400 at every level, as are trailing data after the object, an empty body, and invalid JSON; the problem's `field` names the offending input, e.g. `positions[3].capitalCall.amount`. About `null`: a required amount (`amount` of an activity, call, distribution or unfunded commitment) that is `null` is refused with 400; in every other field the server treats `null` as if the field were absent, so a `null` `title`, `asOf` or `positions` is refused as missing, while a `null` `currency`, status, date, line item or `capitalActivity` takes the default or means none."},
	"CapitalActivityInput":    {Doc: "The document-level capital movement. Optional; when absent, the new version has no capital activity."},
	"PositionInput":           {Doc: "What the document reports for one position (one fund plus one investor): at least one of `capitalCall`, `distribution`, `unfundedCommitment` and `capitalAccount`.", MinProperties: 3},
	"TransactionInput":        {Doc: "One typed line of a capital call's or a distribution's amount: an ILPA Performance Template v1.1 transaction type (granular methodology, with the sub-types of its extended cash-flow table), its amount, and its effect on the LP's unfunded commitment. docs/analytics.md lists each type's ILPA label, its default effect and how net IRR and TVPI count it."},
	"Transaction":             {Doc: "One typed line of a capital call's or a distribution's amount (see `TransactionInput`)."},
	"CapitalAccountInput":     {Doc: "A position's capital account statement for the period from `periodStart` to the document's `asOf`, in the rows of ILPA Reporting Template v2.0: section A.1 (NAV reconciliation) and section A.2 (commitment reconciliation), each line entered with ILPA's sign (by its effect on the LP's capital or unfunded commitment), so each section is a plain sum. `beginningNav` and `endingNav` are required; every other line is optional, and an absent line counts as zero and stays absent. A.1 must roll forward exactly: `beginningNav` plus the movements equals `endingNav`; once any A.2 line is given, `beginningUnfundedCommitment` and `endingUnfundedCommitment` are required and A.2 must roll forward too. The carried interest lines and `totalCommitment` are memos, outside the sums, as in ILPA's template. A statement that does not roll forward, a line with the wrong sign, or a period that ends before it starts is 400, naming the line and the difference. docs/analytics.md maps each line to its ILPA row."},
	"CapitalAccount":          {Doc: "A position's capital account statement (see `CapitalAccountInput`); absent lines are left out."},
	"PositionPerformance":     {Doc: "What a position is worth on `asOf` and how it has performed, with every input a portal needs to chart and recompute each figure. Money is exact; multiples and the IRR are rounded once, as `conventions.rounding` says."},
	"PooledPerformance":       {Doc: "Several positions of one currency pooled, as ILPA's fund-level net IRR and TVPI pool the LPs' flows: paid-in, distributed and NAV are the positions' sums, the multiples divide the sums, the IRR solves the pooled flows with the pooled NAV as terminal value. If some position has no NAV, the pooled NAV is absent (`incomplete`) and so are RVPI, TVPI and the IRR."},
	"NAV":                     {Doc: "A net asset value and where it came from."},
	"PositionFigureChanges":   {Doc: "The document versions committed in a window of instants that moved a position's figures (its summary's or its performance's), each with the figures it moved, before and after it, and every figure from the window's start to its end. Money is exact, and its contributions add up."},
	"FigureMove":              {Doc: "One version committed in the window and the figures it moved."},
	"FigureChange":            {Doc: "One figure before and after, and, for money, the change."},
	"ChangesBasis":            {Doc: "The window and the date a changes answer was read on."},
	"IRR":                     {Doc: "The net IRR (XIRR, actual/365) or why there is none: `rate` only with status `ok` or `stale_nav`."},
	"DatedAmount":             {Doc: "One flow the IRR solves: the flows of one date netted, the terminal NAV among them (dated `asOf`)."},
	"PerformanceFlow":         {Doc: "One typed line counted (or, for `excluded` ones, listed), signed from the LP's side: money paid in negative, money back positive."},
	"Reconciliation":          {Doc: "One capital account statement against the notices of its period (both days included): each figure as the statement gives it, as the notices' typed lines add up, and their difference (statement − notices)."},
	"Compared":                {Doc: "A statement's figure against the notices' (difference = statement − notices)."},
	"Conventions":             {Doc: "The rules the figures follow, stated in the answer (docs/analytics.md has them in full)."},
	"InvestorPerformance":     {Doc: "A page of an investor's positions' performance, each on its own and pooled per currency over the page; currencies are never added."},
	"FundPerformance":         {Doc: "A fund's positions' performance pooled per currency."},
	"DocumentReconciliation":  {Doc: "A page of a document's capital account statements, each reconciled with the notices of its period."},
	"CapitalCallInput":        {Doc: "A position's capital call. The ILPA line items are optional; when any is given, the given ones must add up to `amount` exactly (400 otherwise). Line items themselves may be negative."},
	"DistributionInput":       {Doc: "A position's gross distribution. When any of " + lineNames(&fund.DistributionLines{}, "part", " and ") + " is given, the given ones must add up to `amount` exactly; " + lineNames(&fund.DistributionLines{}, "portion", " and ") + " are portions of `amount`, each between 0 and `amount` (400 otherwise)."},
	"UnfundedCommitmentInput": {Doc: "What a position still owes and, optionally, the total commitment it is measured against (`commitment` must be at least `amount`)."},
	"DocumentHeader":          {Doc: "The document-level record of one version, without its positions."},
	"DocumentVersionRead":     {Doc: "One whole version of a document: its record, capital activity and every position, with the basis it was read on."},
	"DocumentHeaderRead":      {Doc: "The document-level record of the latest version (as known at `knownAt` when given), without its positions, with the basis it was read on."},
	"CapitalActivity":         {Doc: "A document-level capital movement."},
	"CapitalActivities":       {Doc: "A document's capital activity at the version read, beside the capital activity of every version up to it."},
	"Position":                {Doc: "What one version of a document reports for one position."},
	"PositionItem":            {Doc: "One position-level item, flat: what one document, at one version, reports for one position. Line items appear only when the document gave them: " + lineNames(&fund.CallLines{}, "", ", ") + " on capital calls; " + lineNames(&fund.DistributionLines{}, "", ", ") + " on distributions; " + lineNames(&fund.UnfundedLines{}, "", ", ") + " on unfunded commitments."},
	"PositionGroup":           {Doc: "One position's items in an overview; each list holds at most one item."},
	"Overview":                {Doc: "A document grouped as documents, capital activities and positions, all of one committed version (`version`). `documents` and `capitalActivities` come with the first page only; every page holds up to `limit` positions, sorted by `positionId`."},
	"PositionAnalysis":        {Doc: "What one document version reports for one position: how many items of each kind and their exact totals (`\"0.00\"` when none)."},
	"RegisteredPosition":      {Doc: "A position as its fund registers it: one fund plus one investor."},
	"DocumentHeaderPage":      {Doc: "One page of document records (without `status`). A page may hold fewer than `limit` items, even none, while `next` is present: keep reading until `next` is absent."},
	"RegisteredPositionPage":  {Doc: "One page of registered positions. A page may hold fewer than `limit` items, even none, while `next` is present: keep reading until `next` is absent."},
	"PositionItemsPage":       {Doc: "One page of a position's items, with the basis it was read on. A page may hold fewer than `limit` items, even none, while `next` is present: keep reading until `next` is absent."},
	"Problem":                 {Doc: "An RFC 9457 problem details object, sent as `application/problem+json` with `Cache-Control: no-store` for every error.", Examples: []any{Problem{Type: "/problems/invalid", Title: "Bad Request", Status: 400, Detail: "must be a whole number from 1 to 1000", Instance: "/v1/funds/FUND_A/documents", Field: "limit", RequestID: "3f2a9c0d1e4b5a6c"}}},
	"ByStatus":                {Doc: "An exact total split by the status of the items that add up to it (`\"0.00\"` when none)."},
	"DocumentSource":          {Doc: "A document version that figures came from."},
	"PositionSummary":         {Doc: "Where a position stands: what its documents report, each document at one version, added up exactly. A document counts at its latest version dated on or before `asOf`; a document whose latest version no longer reports the position does not count at any date."},
	"CurrencyTotals":          {Doc: "The figures of an investor's positions in one currency, each the sum of the positions' figures except `dpi`, which divides the totals. A position that states no commitment adds nothing to `commitment`, `unfunded.computed` or `unfunded.difference` (`positionsWithoutCommitment` counts them)."},
	"InvestorSummary":         {Doc: "An investor's positions summed up, each on its own and totalled per currency; amounts in different currencies are never added."},
	"Cashflow":                {Doc: "One contribution (capital call) or distribution, dated by a call's due date or a distribution's payment date (the document's as-of date when the document gives none), with the position's running totals after it."},
	"Cashflows":               {Doc: "A position's cash flows in date order; flows of one date list contributions first, then by document ID."},
}

var apiFields = map[string]field{
	// A fund's or an investor's answer holds its record's members only
	// once it has a record.
	"FundFields.name":                  {Optional: true},
	"FundFields.baseCurrency":          {Optional: true},
	"InvestorFields.displayName":       {Optional: true},
	"InvestorFields.investorType":      {Optional: true},
	"DocumentRequest.fundId":           {Required: true},
	"DocumentRequest.title":            {Required: true, Schema: &schema{Type: "string", MinLength: ptr(1)}},
	"DocumentRequest.asOf":             {Required: true},
	"DocumentRequest.currency":         {Default: fund.DefaultCurrency},
	"DocumentRequest.positions":        {Required: true},
	"CapitalActivityInput.amount":      {Required: true},
	"CapitalActivityInput.status":      {Ref: "ActivityStatus", Default: fund.StatusPending},
	"TransactionInput.transactionType": {Schema: &schema{Type: "string", Enum: transactionTypes()}},
	"WebhookRequest.eventTypes":        {Schema: &schema{Type: "array", Items: ref("EventType")}},
	"WebhookRequest.funds":             {Schema: &schema{Type: "array", Items: ref("Id")}},
	"WebhookPatchInput.eventTypes":     {Schema: &schema{Type: "array", Items: ref("EventType")}},
	"WebhookPatchInput.funds":          {Schema: &schema{Type: "array", Items: ref("Id")}},
	"TransactionInput.amount":          {Required: true},
	"TransactionInput.unfundedEffect":  {Schema: &schema{Type: "string", Enum: []string{string(fund.Reduces), string(fund.Increases), string(fund.NoEffect)}}},
	"Transaction.transactionType":      {Schema: &schema{Type: "string", Enum: transactionTypes()}},
	"TransactionLine.transactionType":  {Schema: &schema{Type: "string", Enum: transactionTypes()}},
	"TransactionLine.netTreatment":     {Derive: netTreatmentSchema},
	"TransactionLine.unfundedEffect":   {Schema: &schema{Type: "string", Enum: []string{string(fund.Reduces), string(fund.Increases), string(fund.NoEffect)}}},
	"Transaction.unfundedEffect":       {Required: true, Schema: &schema{Type: "string", Enum: []string{string(fund.Reduces), string(fund.Increases), string(fund.NoEffect)}}},
	"CapitalAccountInput.periodStart":  {Required: true},
	"CapitalAccountInput.beginningNav": {Required: true},
	"CapitalAccountInput.endingNav":    {Required: true},
	"PositionGroup.capitalAccounts":    {Schema: &schema{Type: "array", MaxItems: ptr(1), Items: ref("PositionItem")}},
	"NAV.status": {Derive: func() *schema {
		return enumSchema("", []positions.NAVStatus{positions.NAVStatement, positions.NAVRolledForward, positions.NAVNoStatement, positions.NAVIncomplete})
	}},
	"NAV.value":              {Ref: "Total"},
	"NAV.statementNav":       {Ref: "Total"},
	"NAV.contributionsAfter": {Ref: "Total"},
	"NAV.distributionsAfter": {Ref: "Total"},
	"IRR.rate":               {Schema: &schema{Type: "string", Pattern: "^-?[0-9]+\\.[0-9]{6}$", Examples: []any{"0.258577"}}},
	"IRR.status": {Derive: func() *schema {
		return enumSchema("", positions.IRRStatuses())
	}},
	"DatedAmount.amount":              {Ref: "Total"},
	"PerformanceFlow.transactionType": {Schema: &schema{Type: "string", Enum: transactionTypes()}},
	"PerformanceFlow.netTreatment":    {Derive: netTreatmentSchema},
	"IRR.cumulativeReturn":            {Schema: &schema{Type: "string", Pattern: "^-?[0-9]+\\.[0-9]{6}$", Examples: []any{"0.043927"}}},
	"PerformanceFlow.status":          {Ref: "ActivityStatus"},
	"Multiples.dpi":                   {Schema: &schema{Type: "string", Pattern: "^-?[0-9]+\\.[0-9]{6}$", Examples: []any{"0.152110"}}},
	"Multiples.rvpi":                  {Schema: &schema{Type: "string", Pattern: "^-?[0-9]+\\.[0-9]{6}$", Examples: []any{"0.888000"}}},
	"Multiples.tvpi":                  {Schema: &schema{Type: "string", Pattern: "^-?[0-9]+\\.[0-9]{6}$", Examples: []any{"1.044000"}}},
	"Multiples.multiplesStatus": {Derive: func() *schema {
		return enumSchema("", []positions.MultiplesStatus{positions.MultiplesOK, positions.MultiplesNoNAV, positions.MultiplesNoPaidIn})
	}},
	"PositionPerformance.paidIn":        {Ref: "Total"},
	"PositionPerformance.distributed":   {Ref: "Total"},
	"PooledPerformance.paidIn":          {Ref: "Total"},
	"PooledPerformance.distributed":     {Ref: "Total"},
	"Compared.statement":                {Ref: "Total"},
	"Compared.notices":                  {Ref: "Total"},
	"Compared.difference":               {Ref: "Total"},
	"PositionInput.investorId":          {Required: true},
	"CapitalCallInput.amount":           {Required: true},
	"CapitalCallInput.status":           {Ref: "ActivityStatus", Default: fund.StatusPending},
	"DistributionInput.amount":          {Required: true},
	"DistributionInput.status":          {Ref: "ActivityStatus", Default: fund.StatusPending},
	"UnfundedCommitmentInput.amount":    {Required: true},
	"UnfundedCommitmentInput.status":    {Ref: "UnfundedStatus", Default: fund.StatusActive},
	"DocumentHeader.status":             {Schema: &schema{Type: "string", Enum: []string{wire.VersionLatest, wire.VersionSuperseded, wire.VersionVoided}}},
	"ItemTypeChanges.itemType":          {Ref: "ItemType"},
	"Event.type":                        {Ref: "EventType"},
	"EventPosition.change":              {Ref: "PositionChange"},
	"EventPosition.itemTypes":           {Schema: &schema{Type: "array", Items: ref("ItemType")}},
	"DocumentHeader.createdBy":          {Schema: &schema{Type: "string", Examples: []any{"dev-admin"}}},
	"CapitalActivities.latest":          {Schema: &schema{OneOf: []*schema{ref("CapitalActivity"), {Type: "null"}}}},
	"Basis.asOf":                        {Schema: &schema{OneOf: []*schema{ref("Date"), {Type: "null"}}}},
	"FigureChange.before":               {Schema: &schema{OneOf: []*schema{{Type: "string", Examples: []any{"100000.00"}}, {Type: "null"}}}},
	"FigureChange.after":                {Schema: &schema{OneOf: []*schema{{Type: "string", Examples: []any{"110000.00"}}, {Type: "null"}}}},
	"FigureChange.unit":                 {Schema: &schema{Type: "string", Enum: []string{string(positions.FigureMoney), string(positions.FigureRatio)}}},
	"PositionItem.status":               {Schema: &schema{Type: "string", Enum: []string{string(fund.StatusPending), string(fund.StatusCompleted), string(fund.StatusActive)}}},
	"DocumentPosition.items":            {Schema: &schema{Type: "array", MinItems: ptr(1), MaxItems: ptr(len(fund.ItemKinds)), Items: ref("PositionItem")}},
	"Problem.type":                      {Derive: problemTypeSchema},
	"Problem.title":                     {Schema: &schema{Type: "string", Examples: []any{"Bad Request"}}},
	"Problem.status":                    {Schema: &schema{Type: "integer", Minimum: ptr[int64](400), Maximum: ptr[int64](599)}},
	"Problem.instance":                  {Schema: &schema{Type: "string", Format: "uri-reference"}},
	"Cashflow.cumulativePaidIn":         {Ref: "Total"},
	"Cashflow.cumulativeDistributed":    {Ref: "Total"},
	"Cashflow.cumulativeNetCashflow":    {Ref: "Total"},
	"DocumentRequest.kind":              {Required: true},
	"PositionInput.positionId":          {Required: true},
	"CapitalActivity.status":            {Ref: "ActivityStatus"},
	"Cashflow.status":                   {Ref: "ActivityStatus"},
	"PositionItem.itemType":             {Ref: "ItemType"},
	"PositionGroup.capitalCalls":        {Schema: &schema{Type: "array", MaxItems: ptr(1), Items: ref("PositionItem")}},
	"PositionGroup.distributions":       {Schema: &schema{Type: "array", MaxItems: ptr(1), Items: ref("PositionItem")}},
	"PositionGroup.unfundedCommitments": {Schema: &schema{Type: "array", MaxItems: ptr(1), Items: ref("PositionItem")}},
	"Figures.commitment":                {Ref: "Total"},
	"Figures.recallable":                {Ref: "Total"},
	"UnfundedFigures.reported":          {Ref: "Total"},
	"UnfundedFigures.computed":          {Ref: "Total"},
	"UnfundedFigures.difference":        {Ref: "Total"},
	"ByStatus.total":                    {Ref: "Total"},
	"ByStatus.pending":                  {Ref: "Total"},
	"ByStatus.completed":                {Ref: "Total"},
	"Figures.dpi":                       {Schema: &schema{Type: "string", Pattern: fmt.Sprintf("^[0-9]+\\.[0-9]{%d}$", positions.MultipleScale), Examples: []any{"0.152110"}}},
	"Cashflow.flowType":                 {Schema: &schema{Type: "string", Enum: []string{wire.FlowContribution, wire.FlowDistribution}}},
	"CurrencyTotals.positions":          {Schema: &schema{Type: "integer", Minimum: ptr[int64](1)}},
	"CapitalCall.status":                {Ref: "ActivityStatus", Required: true},
	"Distribution.status":               {Ref: "ActivityStatus", Required: true},
	"UnfundedCommitment.status":         {Ref: "UnfundedStatus", Required: true},
}

var apiParameters = map[string]parameterSpec{
	"documentId": {In: "path", Schema: ref("Id"),
		Doc: "The document's ID. An invalid ID is 400."},
	"positionId": {In: "path", Schema: ref("Id"),
		Doc: "The position's ID. An invalid ID is 400."},
	"fundId": {In: "path", Schema: ref("Id"),
		Doc: "The fund's ID. An invalid ID is 400."},
	"investorId": {In: "path", Schema: ref("Id"),
		Doc: "The investor's ID. An invalid ID is 400."},
	"webhook-id": {In: "header", Schema: &schema{Type: "string", Examples: []any{"evt_DOC001_v2"}},
		Doc: "Sent with each webhook delivery: the event's ID, the same on every attempt and redelivery; deduplicate on it."},
	"webhook-timestamp": {In: "header", Schema: &schema{Type: "string", Pattern: "^[0-9]+$", Examples: []any{"1768469712"}},
		Doc: "Sent with each webhook delivery: when the attempt was sent, in Unix seconds; refuse one far from your clock (the reference libraries allow 5 minutes)."},
	"webhook-signature": {In: "header", Schema: &schema{Type: "string", Examples: []any{"v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="}},
		Doc: "Sent with each webhook delivery: `v1,` and the base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>` keyed with the endpoint's secret (the base64 after `whsec_`); during a secret rotation's overlap, two such signatures, space-separated."},
	"webhookId": {In: "path", Schema: ref("Id"),
		Doc: "The webhook endpoint's ID, as its creation answered it. An invalid ID is 400."},
	"eventId": {In: "path", Schema: &schema{Type: "string", Pattern: "^evt_[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}_v[1-9][0-9]*$", Examples: []any{"evt_DOC001_v2"}},
		Doc: "The event's ID (`evt_<documentId>_v<version>`), as the feed and the `webhook-id` header carry it. Anything else is 400."},
	"version": {In: "path", Schema: &schema{Type: "string", Pattern: "^(latest|[1-9][0-9]*)$", Examples: []any{"1", "latest"}},
		Doc: "A version number from 1, or `latest`. Anything else (0, a negative number, text) is 400."},
	"limit": {In: "query", Schema: &schema{Type: "integer", Minimum: ptr[int64](1), Maximum: ptr[int64](1000), Default: 100},
		Doc: "The most items (for an overview, positions) one page holds: a whole number from 1 to 1000, 100 when absent. Anything else (empty included) is 400."},
	"fanoutLimit": {Name: "limit", In: "query", Schema: &schema{Type: "integer", Minimum: ptr[int64](1), Maximum: ptr[int64](MaxFanoutPage), Default: MaxFanoutPage},
		Doc: fmt.Sprintf("The most positions one page holds (each costs a read and a rate-limit token): a whole number from 1 to %d, %d when absent. Anything else (empty included) is 400.", MaxFanoutPage, MaxFanoutPage)},
	"cursor": {In: "query", Schema: ref("Cursor"),
		Doc: "The `next` of the previous page, unchanged; absent for the first page. A cursor this query did not issue, or one issued to another principal, is 400."},
	"from": {In: "query", Schema: ref("Date"),
		Doc: "Keep only entries whose asOf is on or after this date. An invalid date is 400."},
	"to": {In: "query", Schema: ref("Date"),
		Doc: "Keep only entries whose asOf is on or before this date, every version of that date included. An invalid date, or one before `from`, is 400."},
	"kind": {In: "query", Schema: ref("DocumentKind"),
		Doc: "Keep only documents of this kind. Any other value is 400."},
	"itemType": {In: "query", Schema: &schema{Type: "string", Enum: fund.ItemKindNames()},
		Doc: "Keep only items of this type, the `itemType` of the items answered. Any other value is 400."},
	"transactions": {In: "query", Schema: &schema{Type: "string", Enum: wire.TypedLinesValues(), Default: string(wire.StatedLines)},
		Doc: "Which typed lines (`transactions`) each capital call and distribution answered carries: `stated` (the default), those its document states, none when it states none; `all`, those stated or else mapped from its line items (docs/analytics.md, \"Transaction types\"), as summaries, performance and the export count them. Any other value is 400."},
	"fundIdQuery": {Name: "fundId", In: "query", Schema: ref("Id"),
		Doc: "A fund the token covers: list only the investors holding positions of it. Required for an admin token that does not cover every fund. An invalid ID is 400."},
	"document": {In: "query", Schema: ref("Id"),
		Doc: "A document ID: return only the position's capital call in that document. An invalid ID is 400."},
	"If-Match": {In: "header", Schema: &schema{Type: "string", Pattern: "^(\\*|(W/)?\"?[0-9]+\"?)$", Examples: []any{"\"3\""}},
		Doc: "The version the caller last saw, as its ETag (`\"3\"`; `3` is accepted too); `\"0\"` means the document must not exist yet. The write happens only if it is the document's current version, 412 otherwise (also when another writer commits first). If-Match compares strongly (RFC 9110): a weak tag (`W/\"3\"`) never matches and is 412. Without it, concurrent writers of a PUT are serialized and each gets its own version; a DELETE requires it (428 without). `*` asks only that the document exist, whatever its version when the write commits (writers are serialized as without If-Match); a document that does not exist, or belongs to a fund the token does not cover, is 412. Any other value that is not a version number is 400."},
	"documentKind": {In: "path", Schema: ref("DocumentKind"),
		Doc: "The document kind whose import template to answer. Any other value is 400."},
	"format": {In: "query", Schema: &schema{Type: "string", Enum: []string{imports.FormatCSV, imports.FormatXLSX}, Default: imports.FormatCSV},
		Doc: "The template's format: `csv` (UTF-8, RFC 4180) or `xlsx` (a workbook with a second sheet, `Columns`, describing each column); `csv` when absent. Any other value is 400."},
	"dryRun": {In: "query", Schema: &schema{Type: "string", Enum: []string{"false", "true"}, Default: "false"},
		Doc: "`true` checks the file and writes nothing: the answer (200) lists every problem and each document that would be written. `false` (the default) writes. Any other value is 400."},
	"Idempotency-Key": {In: "header", Schema: &schema{Type: "string", MinLength: ptr(1), MaxLength: ptr(maxIdempotencyKey), Pattern: fmt.Sprintf("^[!-~]{1,%d}$", maxIdempotencyKey), Examples: []any{"7d1f0c2e-5b8a-4e4f-9c1d-2a3b4c5d6e7f"}},
		Doc: "Makes the request safe to repeat. 1 to 255 visible ASCII characters (`!` to `~`, no spaces), such as a UUID; any other value is 400 (`field` `Idempotency-Key`), and an empty header counts as absent. The first answer with a status below 500 (2xx and 4xx alike) is stored per principal (the token's subject, role and funds; the same key of another principal is another key) for 24 hours (FUNDSVC_IDEMPOTENCY_TTL). A repeat with the same key and the same request (method, path, `Content-Type`, `If-Match` and body, byte for byte) runs nothing and gets the stored answer byte for byte: its status, body, `Content-Type`, `ETag` and `Location`, plus `Idempotent-Replayed: true` and its own `X-Request-ID` (and, like every answer, `Cache-Control: no-store`). The same key with a different request is 422 (`/problems/idempotency_key_reused`, `field` `Idempotency-Key`): use a new key. While the first request with the key still runs, a repeat is 409 (retry shortly). An answer of 500 or more is not stored and releases the key, so repeating the request runs it again. If the server stops mid-request, or cannot store the answer, the key stays locked for a lease (the request timeout, at least 1 minute, plus 10 s; FUNDSVC_IDEMPOTENCY_LEASE), after which the same request runs again. Answers given before the key is claimed are not stored: 401, 429, 403 for an investor token, 400 for the key itself, and 413."},
	"X-Request-ID": {In: "header", Schema: &schema{Type: "string", Pattern: "^[A-Za-z0-9._-]{1,64}$"},
		Doc: "The caller's request ID, echoed in the X-Request-ID response header, the problem's `requestId` and the logs. A value that does not match the pattern is replaced with a random one."},
	"after": {In: "query", Schema: ref("Cursor"),
		Doc: "The `next` of a previous answer of the feed, unchanged: the events committed after the place it names. Absent: from the first event ever committed. A cursor of another query (another `type` or `fund`) or of another principal is 400."},
	"type": {In: "query", Schema: ref("EventType"),
		Doc: "Keep only events of this type, the events' `type`. Any other value is 400."},
	"fund": {In: "query", Schema: ref("Id"),
		Doc: "Keep only the events of this fund's documents. An invalid ID is 400."},
	"changesFrom": {Name: "from", In: "query", Schema: &schema{Type: "string", Format: "date-time", Examples: []any{"2026-01-01T00:00:00Z"}},
		Doc: "Required: the window's start, excluded (RFC 3339 with its offset): the figures before are the position as known at this instant. Not RFC 3339, later than the server's clock, or not before `to`, is 400."},
	"changesTo": {Name: "to", In: "query", Schema: &schema{Type: "string", Format: "date-time", Examples: []any{"2026-02-01T00:00:00Z"}},
		Doc: "The window's end, included (RFC 3339 with its offset): the figures after are the position as known at this instant. The instant the read began, by the server's clock, when absent. Not RFC 3339, or later than the server's clock, is 400."},
	"knownAt": {In: "query", Schema: &schema{Type: "string", Format: "date-time", Examples: []any{"2026-10-01T00:00:00Z"}},
		Doc: "Read as known at this instant (RFC 3339 with its offset): each document counts at its latest version committed at or before it, and a document first committed later does not exist (404 like an unknown one). With `knownAt` alone, `asOf` is its date (UTC). The answer's `basis` echoes both, and says whether the answer is `settled` (knownAt older than the settle margin, so it can no longer change); a page's `next` pins them. Conventions: docs/knownat.md. An instant that is not RFC 3339, or is later than the server's clock, is 400."},
	"asOf": {In: "query", Schema: ref("Date"),
		Doc: "The date to take the figures at: each document counts at its latest version dated on or before it, and documents dated later do not count. Absent: every document at its latest version. An invalid date is 400."},
}

var apiHeaders = map[string]headerSpec{
	"X-Request-ID": {Schema: &schema{Type: "string"},
		Doc: "The request's ID: the caller's X-Request-ID when it matches `^[A-Za-z0-9._-]{1,64}$`, a random one otherwise."},
	"ETag": {Schema: &schema{Type: "string", Pattern: "^\"[1-9][0-9]*\"$", Examples: []any{"\"3\""}},
		Doc: "The document version the response shows, as a strong entity tag: `\"<version>\"`. Send it back in If-Match to restate only that version."},
	"Location": {Schema: &schema{Type: "string", Format: "uri-reference"},
		Doc: "The document's URL path: `/v1/documents/{documentId}`."},
	"Cache-Control": {Schema: &schema{Type: "string", Const: "no-store"},
		Doc: "`no-store` on every answer, successful or not (`/openapi.json` included): investors' figures must never be kept by a shared cache."},
	"Retry-After": {Schema: &schema{Type: "integer", Minimum: ptr[int64](1)},
		Doc: "Whole seconds to wait before retrying, at least 1: `1` for 503; for 429, until the token's bucket holds a token again (after a charge that took it into debt, until the debt is paid)."},
	"WWW-Authenticate": {Schema: &schema{Type: "string", Enum: []string{"Bearer realm=\"fundsvc\"", "Bearer realm=\"fundsvc\", error=\"invalid_token\""}},
		Doc: "The bearer challenge of a 401: `Bearer realm=\"fundsvc\"` when no bearer token was sent, `Bearer realm=\"fundsvc\", error=\"invalid_token\"` when the token sent is not valid."},
	"Content-Disposition": {Schema: &schema{Type: "string", Examples: []any{"attachment; filename=capital_call_notice.csv"}},
		Doc: "`attachment`, with the file's name: the document kind and the format's extension."},
	"Idempotent-Replayed": {Schema: &schema{Type: "string", Const: "true"},
		Doc: "`true` on an answer replayed for a repeated Idempotency-Key (whatever its status); absent on the first answer and without the header."},
}

var errorResponses = map[string]errorResponse{
	"BadRequest": {Code: "invalid", Detail: "must be a whole number from 1 to 1000", Field: "limit",
		Doc: "The request is malformed or breaks a rule (problem type `/problems/invalid`); `field` names the input to blame."},
	"Unauthorized": {Code: "unauthorized", Detail: "send a bearer token: Authorization: Bearer <token>", Headers: []string{"WWW-Authenticate"},
		Doc: "No valid bearer token (problem type `/problems/unauthorized`): the `Authorization` header is missing or not `Bearer <token>`, or the token's signature, algorithm, `kid`, expiry, lifetime, `nbf`/`iat`, issuer, audience or claims are not acceptable (the `detail` says which kind of problem, not which value would do). Answered before anything else about the request is checked; `WWW-Authenticate` carries the challenge."},
	"Forbidden": {Code: "forbidden", Detail: "this route is for admin tokens",
		Doc: "The token may not use this route (problem type `/problems/forbidden`): document and fund routes are for admin tokens, whatever the data."},
	"NotFound": {Code: "not_found", Detail: "document DOC999 not found",
		Doc: "No such resource, or one the token may not see (problem type `/problems/not_found`): data of a fund the token does not cover, or of another investor, gets the answer of an ID that does not exist."},
	"Conflict": {Code: "conflict", Detail: "document DOC001 belongs to fund FUND_A; a restatement cannot move it to FUND_B",
		Doc: "The request conflicts with the stored state, or a request with the same Idempotency-Key is still running (problem type `/problems/conflict`)."},
	"PreconditionFailed": {Code: "precondition_failed", Detail: "document DOC001 is at version 2, not 1",
		Doc: "If-Match named a version that is not the current one, or `*` for a document that does not exist (problem type `/problems/precondition_failed`)."},
	"PreconditionRequired": {Code: "precondition_required", Detail: "send If-Match with the version to void, as its ETag", Field: "If-Match",
		Doc: "The write must be conditional and came without If-Match (problem type `/problems/precondition_required`, `field` `If-Match`): nothing was written."},
	"PayloadTooLarge": {Code: "too_large", Detail: "exceeds the limit of 8388608 bytes", Field: "body",
		Doc: "The body exceeds the server's limit (problem type `/problems/too_large`; FUNDSVC_MAX_BODY_BYTES, 8 MiB by default)."},
	"UnsupportedMediaType": {Code: "unsupported_media_type", Detail: "send the document as application/json", Field: "Content-Type",
		Doc: "The body is not sent as JSON (problem type `/problems/unsupported_media_type`): Content-Type must be `application/json` or another `+json` type."},
	"IdempotencyKeyReused": {Code: "idempotency_key_reused", Detail: "this Idempotency-Key was used for a different request; use a new key", Field: "Idempotency-Key",
		Doc: "The Idempotency-Key was used, by the same principal within its 24 hours, for a different request (problem type `/problems/idempotency_key_reused`, `field` `Idempotency-Key`): another method, path, `Content-Type`, `If-Match` or body. Nothing was written; use a new key."},
	"InternalError": {Code: "internal", Detail: "an internal error occurred; it has been logged",
		Doc: "An unexpected failure, logged with the request ID (problem type `/problems/internal`)."},
	"TooManyRequests": {Code: "rate_limited", Detail: "too many requests for this token; retry after the time in Retry-After", Headers: []string{"Retry-After"},
		Doc: "The token's requests have read more than its rate limit allows (problem type `/problems/rate_limited`): each principal (the token's subject, role and funds or investor) has a bucket of FUNDSVC_RATE_BURST tokens (200 by default) refilled with FUNDSVC_RATE_LIMIT a second (100), counted by each server instance, and each request is charged its reads (see Rate limit in the description). Decided as soon as the token is verified, or, for a fan-out route, before it reads its positions, so the request read nothing more. Retry after the `Retry-After` delay."},
	"Unavailable": {Code: "unavailable", Detail: "the request timed out", Headers: []string{"Retry-After"},
		Doc: "The request timed out (the server's FUNDSVC_REQUEST_TIMEOUT for reads, 60 s by default, or FUNDSVC_WRITE_TIMEOUT for writes, 5 minutes by default) or was cancelled, or the table is unreachable, or the server computes as many fan-out reads (investor summaries and performance, fund performance, reconciliations) as it may at once, FUNDSVC_FANOUT_CONCURRENCY, decided before anything is read (problem type `/problems/unavailable`). Retry after the `Retry-After` delay."},
}

var scalarSchemas = map[string]*schema{
	"Id":             &schema{Type: "string", Description: "An ID of a document, fund, investor or position: 1 to 64 characters, letters, digits and `_ . : -`, starting with a letter or digit. No ID can hold `#` or `/`. An ID that breaks this rule is refused with 400, whether in the path, a query parameter or the body.", MinLength: ptr(1), MaxLength: ptr(64), Pattern: idPattern, Examples: []any{"DOC001"}},
	"Date":           &schema{Type: "string", Description: "A calendar date, `YYYY-MM-DD`, without time zone.", Format: "date", Pattern: "^[0-9]{4}-[0-9]{2}-[0-9]{2}$", Examples: []any{"2025-09-30"}},
	"Money":          &schema{Type: "string", Description: "An exact decimal amount, always a JSON string (never a number, never null): an optional minus sign, at most 15 digits before the point and 2 to 4 after it (`500000` is written `\"500000.00\"`, `12.5` as `\"12.50\"`, `0.1234` keeps its four places). Trailing zeros past the second decimal are not kept in storage: `\"1.2300\"` is answered as sent by the PUT that stores it, and read back later as `\"1.23\"`. Every value also matches the input pattern `^-?(0|[1-9][0-9]{0,14})(\\.[0-9]{1,4})?$` and fits a DECIMAL(19,4) exactly.", Pattern: moneyOutPattern, Examples: []any{"500000.00"}},
	"MoneyInput":     &schema{Description: "An exact decimal amount in a request: a JSON string (preferred) or a JSON number, in plain decimal notation: an optional minus sign, at most 15 digits before the point and at most 4 after it, no exponent, no plus sign, no leading zeros, no separators. The digits are taken exactly as written (a number is never read through a float), so `1e5`, `1.0E2`, `007` and `0.12345` are refused with 400 like any other breach. `null` is refused with 400 where an amount is required; see the request's description for optional amounts.", OneOf: []*schema{&schema{Type: "string", Pattern: moneyInPattern}, &schema{Type: "number", Description: "Written in the same notation as the string form; the server reads the number's literal text.", ExclusiveMinimum: ptr(-moneyBound), ExclusiveMaximum: ptr(moneyBound)}}, Examples: []any{"500000.00", 500000}},
	"Currency":       &schema{Type: "string", Description: "An ISO 4217 currency code: three capital letters.", Pattern: "^[A-Z]{3}$", Examples: []any{"USD"}},
	"DocumentKind":   enumSchema("The kind of fund document.", fund.Kinds),
	"ActivityStatus": enumSchema("The state of a capital activity, capital call or distribution.", []fund.Status{fund.StatusPending, fund.StatusCompleted}),
	"UnfundedStatus": enumSchema("The state of an unfunded commitment: always `active`.", []fund.Status{fund.StatusActive}),
	"InvestorType":   enumSchema("What kind of investor an investor is.", fund.InvestorTypes),
	"ItemType":       enumSchema("The kind of a position item.", fund.ItemKindNames()),
	"EventType":      enumSchema("What a committed version did to its document, in Standard Webhooks' dotted `<resource>.<action>` form (each part lower snake_case).", fund.EventTypes),
	"PositionChange": enumSchema("What a version did to a position against the version it replaced.", []fund.PositionChange{fund.PositionAdded, fund.PositionRemoved, fund.PositionChanged}),
	"Version":        &schema{Type: "integer", Description: "A document version: 1 for the first write, N+1 for every later one. The ETag of a document is its version.", Minimum: ptr[int64](1)},
	"Cursor":         &schema{Type: "string", Description: "An opaque, signed pagination token. Pass it back unchanged as `cursor` to read the next page of the same query (same route, path and filters) with a token of the same principal (the same subject, role and funds or investor; a renewed token of that principal may continue). It cannot be read or altered, nor used with another query or by another principal (400). Cursors may stop working when the server restarts without a configured cursor key.", MaxLength: ptr(4096)},
	"Total":          &schema{Type: "string", Description: "An exact decimal sum of amounts, always a JSON string: written like `Money`, but a sum of many amounts may have more than 15 digits before the point.", Pattern: "^-?(0|[1-9][0-9]*)\\.[0-9]{2,4}$", Examples: []any{"1250000.00"}},
}

// Version is the API's version, the OpenAPI document's info.version: the
// newest version in CHANGELOG.md, which README.md states too
// (TestTheAPIVersionIsTheChangelogsNewest). While it is 0.x the API may
// still change; the routes stay /v1.
const Version = "0.7.0"

var apiInfo = openAPIInfo{Title: "fundsvc", Version: Version, Summary: "Investment fund documents and position analytics.",
	License:     openAPILicense{Name: "Proprietary", Identifier: "LicenseRef-Proprietary"},
	Description: "fundsvc stores fund documents (capital call notices, distribution notices, capital account statements) and serves documents and positions (one fund plus one investor) read back from them.\n\n**Authentication and scope.** Every `/v1` route needs a bearer token, a JWT (security scheme `bearerAuth`, which describes the claims and keys). Without a valid one the answer is 401 (`/problems/unauthorized`, with `WWW-Authenticate`), before anything else about the request is checked. An `admin` token writes and reads the documents, fund listings and positions of the funds its `funds` claim names (`*`: every fund). An `investor` token reads its own investor's data only: `/v1/investors/{its investorId}/positions`, `/summary` and `/performance`, and `/v1/positions/{positionId}` and its `/capital-calls`, `/summary`, `/cashflows` and `/performance` for that investor's positions. Document and fund routes answer investor tokens 403 (`/problems/forbidden`) whatever the data; their security requirement names the `admin` role. Scope comes from the token only, never from the path or the body: data of a fund the token does not cover, or of another investor, is answered 404 like an ID that does not exist (each operation's 404 says exactly when). `/livez` and `/readyz` need no token; `/openapi.json` needs none by default, and a token of either role when the server sets `FUNDSVC_PUBLIC_OPENAPI=false`; `/metrics`, whose series count every fund's activity, needs an admin token of every fund (`funds: [\"*\"]`) unless the server sets `FUNDSVC_PUBLIC_METRICS=true` (Prometheus scrapes the metrics listener, `FUNDSVC_METRICS_LISTEN`, which needs none).\n\n**Versions and consistency.** Every `PUT` of a document creates its next version, recording the token's subject as `createdBy`; the latest view is replaced and an immutable record of every version stays readable. A reader sees one version of a document at a time, never a mix of two, also for documents far larger than one DynamoDB transaction: document routes report the version they show in `version` and in the `ETag` header (`\"<version>\"`), and an overview paged with `cursor` stays on the version of its first page. Send an ETag back in `If-Match` to restate only that version (412 otherwise), or `If-Match: *` to restate only a document that exists; without `If-Match`, concurrent writers are serialized and no version is lost. Routes that pivot by position or investor read secondary indexes and are eventually consistent.\n\n**Idempotency.** A `PUT` that carries an `Idempotency-Key` header is safe to repeat: the first answer is stored per principal for 24 hours, and a repeat of the same request gets it back byte for byte with `Idempotent-Replayed: true` and writes nothing. The same key with another request is 422 (`/problems/idempotency_key_reused`); while the first request still runs, 409. See the parameter `Idempotency-Key`.\n\n**Pagination.** List routes take `limit` (1 to 1000, default 100; the fan-out routes 1 to 50, default 50, as each read of a page's positions costs a DynamoDB request) and an opaque `cursor`, and answer `{\"items\": [...], \"next\": \"...\"}`; the document overview pages its positions the same way. `next` is absent on the last page. A page may hold fewer than `limit` items while `next` is present, so read until `next` is absent. A cursor works only for the query (route, path and filters) that issued it and only for the principal it was issued to (the token's subject, role and funds or investor); a cursor from another query or another principal's token is 400.\n\n**Money.** Amounts are exact decimals: JSON strings in responses (`\"500000.00\"`), strings or plain JSON numbers in requests, never floats. Responses never hold a `null` amount; requests may not send one where an amount is required.\n\n**Errors.** Every error is an RFC 9457 problem (`application/problem+json`, schema `Problem`, `Cache-Control: no-store`) whose `type` is `/problems/<code>`. Unknown paths are 404 (`/problems/no_route`); a method a path does not serve is 405 (`/problems/method_not_allowed`) with an `Allow` header listing the methods the path serves, HEAD and OPTIONS included. A path with an extra trailing slash is redirected to the one without (301 for GET, 307 otherwise). These three answers need no token. Every request may time out (503 with `Retry-After`). A write (`PUT`, `POST`, `PATCH`, `DELETE`) is also answered 503 with `Retry-After`, before anything is read or written, when its instance already holds as many request bodies as it may (FUNDSVC_MAX_BODY_BYTES_IN_FLIGHT, 128 MiB by default, each body counted at its `Content-Length`, or at FUNDSVC_MAX_BODY_BYTES without one) or, for a write of a document, as many writers of that document waiting behind the one writing it (FUNDSVC_MAX_WAITING_WRITERS, 8 by default): it changed nothing, and its `Idempotency-Key` stays free, so repeat it later; every response but those redirects carries `X-Request-ID`, and every one `Cache-Control: no-store`.\n\n**Rate limit.** Each principal (a token's subject, role and funds or investor) has a bucket of FUNDSVC_RATE_BURST tokens (200 by default), refilled with FUNDSVC_RATE_LIMIT tokens a second (100), and each request is charged the reads it causes: one token when the token is verified, which pays for the first DynamoDB request and is all most routes cost; the fan-out routes (`/v1/investors/{investorId}/summary` and `/performance`, `/v1/documents/{documentId}/reconciliation`, `/v1/funds/{fundId}/performance`) one more per position they read and per listing request, as each operation's description says: a page up front for its `limit` (given back for the positions it does not hold once listed), a fund's performance once its registry is read, before any position. A charge goes ahead while the bucket holds at least one token and may take it into debt, so a fund's performance pooling more positions than the burst is possible and costs its principal the time the refill takes to pay for it. Beyond, the answer is 429 (`/problems/rate_limited`) with `Retry-After` in whole seconds, before anything more is read. Each server instance counts on its own, so behind a load balancer over N instances a principal may get up to N times the rate. Each instance also computes at most FUNDSVC_FANOUT_CONCURRENCY fan-out reads at once (twice its processors, at least 4, by default), whoever asks; beyond, 503 (`/problems/unavailable`, `Retry-After: 1`) before anything is read: the instance's capacity is spent, not the token's, so a moment later or another instance serves it.\n\n**Performance.** Capital account statements (ILPA Reporting Template v2.0 sections A.1 and A.2) give positions a NAV; typed transaction lines (ILPA Performance Template v1.1 types) classify calls and distributions. The `/performance` routes answer NAV, DPI, RVPI, TVPI and net IRR on a date, with the flows used and the conventions stated, and `/v1/documents/{documentId}/reconciliation` reconciles statements with notices."}

var apiTags = []openAPITag{
	{Name: "documents", Description: "Fund administrators (admin tokens, within the funds they cover): create, restate and read documents."},
	{Name: "funds", Description: "A fund's documents and positions (admin tokens, within the funds they cover)."},
	{Name: "investors", Description: "An investor's positions (an investor token its own; an admin token those in the funds it covers)."},
	{Name: "positions", Description: "A position's items across documents (an investor token its own investor's; an admin token those of the funds it covers)."},
	{Name: "webhooks", Description: "Endpoints that receive the event feed signed (Standard Webhooks 1.0), at least once, and their delivery logs (admin tokens, within the funds they cover)."},
	{Name: "events", Description: "The event feed: every committed version of a document, in commit order (an admin token the funds it covers; an investor token the documents touching its positions)."},
	{Name: "imports", Description: "Documents from a CSV or XLSX file: templates, a dry run, and a write per document (admin tokens, within the funds they cover)."},
	{Name: "ops", Description: "Health, metrics and this document; no token needed by default but for `/metrics`."},
}

var bearerAuth = map[string]string{"type": "http", "scheme": "bearer", "bearerFormat": "JWT",
	"description": "A JWT sent as `Authorization: Bearer <token>`. Every `/v1` route needs one; `/livez` and `/readyz` never do; `/openapi.json` does only when the server sets `FUNDSVC_PUBLIC_OPENAPI=false` (it is public by default); `/metrics` needs an admin token of every fund unless the server sets `FUNDSVC_PUBLIC_METRICS=true`. A missing or invalid token is 401 with `WWW-Authenticate`.\n\n**Algorithms and keys.** Only the algorithms of the keys the server is configured with are accepted, so a token cannot choose how it is verified (no `none`, no HS256 signed with a public key): HS256 with the shared secret `FUNDSVC_JWT_HS256_SECRET` (at least 32 bytes), and RS256 or ES256 (P-256) with the public key of the JWKS file `FUNDSVC_JWT_JWKS_FILE` (RSA keys of at least 2048 bits) that the token header's `kid` names, of the type `alg` requires. The JWKS file is re-read every `FUNDSVC_JWT_JWKS_REFRESH` (5 min by default) and when a token names a `kid` it does not hold (at most every 10 s), so a rotated key is accepted and a removed key refused without a restart.\n\n**Claims.** `sub` (required): who acts, recorded as `createdBy` on the versions the token writes. `role` (required): `admin` or `investor`. `funds` (admin tokens, required, not empty): the IDs of the funds the token may write and read, or `[\"*\"]` for every fund. `investor` (investor tokens, required): the ID of the one investor whose positions the token may read. An admin token carries no `investor`, an investor token no `funds`. `exp` and `iat` (both required): `exp - iat` may be at most `FUNDSVC_JWT_MAX_LIFETIME` (24 h by default); `iat`, and `nbf` when present, must not lie in the future; clocks may differ by `FUNDSVC_JWT_LEEWAY` (30 s by default). `iss` must equal `FUNDSVC_JWT_ISSUER` and `aud` must hold `FUNDSVC_JWT_AUDIENCE`, each only when the server sets it; a server with a JWKS file always sets the audience, so RS256 and ES256 tokens always need `aud`. Other claims are ignored.\n\n**Roles.** A security requirement naming `admin` marks a route for admin tokens only: an investor token gets 403. The other `/v1` routes take both roles, each within its scope: an admin the funds its token covers, an investor its own investor. Data outside the token's scope is answered 404 like an ID that does not exist.\n\n**Development tokens.** `fundsvc token --role admin --funds FUND_A,FUND_B` (or `--funds '*'`) and `fundsvc token --role investor --investor INVESTOR_1` print an HS256 token signed with `FUNDSVC_JWT_HS256_SECRET`, with `iss` and `aud` when configured (`--subject`, default `dev-<role>`; `--ttl`, default 12h, at most `FUNDSVC_JWT_MAX_LIFETIME`). `make run` prints an admin and an investor token."}

// The patterns of IDs and amounts, from fund's rules.
var (
	idPattern       = `^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$`
	moneyInPattern  = fmt.Sprintf(`^-?(0|[1-9][0-9]{0,%d})(\.[0-9]{1,%d})?$`, fund.MoneyMaxIntegerDigits-1, fund.MoneyMaxScale)
	moneyOutPattern = fmt.Sprintf(`^-?(0|[1-9][0-9]{0,%d})\.[0-9]{2,%d}$`, fund.MoneyMaxIntegerDigits-1, fund.MoneyMaxScale)
	moneyBound      = int64(math.Pow10(fund.MoneyMaxIntegerDigits))
)

// apiServers is the document's own entry: relative, so it resolves against
// wherever the document was fetched; the running service names itself
// before it (requestServer, openapi.go).
var apiServers = []openAPIServer{{URL: "/", Description: "Relative: the server this document was fetched from."}}

func enumSchema[T ~string](doc string, values []T) *schema {
	s := &schema{Type: "string", Description: doc}
	for _, v := range values {
		s.Enum = append(s.Enum, string(v))
	}
	return s
}

// lineNames lists the JSON names of the line items that lines (a pointer to
// one of fund's lines structs) declares with rule (any rule when empty),
// quoted as code, the last two joined by last.
func lineNames(lines any, rule, last string) string {
	var names []string
	for _, l := range fund.LinesOf(lines) {
		if rule == "" || l.Rule == rule {
			names = append(names, "`"+l.Name+"`")
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + last + names[len(names)-1]
}

func transactionTypes() []string {
	var out []string
	for _, t := range fund.TransactionTypes {
		out = append(out, string(t.Type))
	}
	return out
}

// problemTypeSchema lists a problem type for every code of the status table.
func problemTypeSchema() *schema {
	s := &schema{Type: "string", Format: "uri-reference"}
	for code := range statusOf {
		s.Enum = append(s.Enum, "/problems/"+code)
	}
	slices.SortFunc(s.Enum, func(a, b string) int {
		return cmp.Or(statusOf[strings.TrimPrefix(a, "/problems/")]-statusOf[strings.TrimPrefix(b, "/problems/")], strings.Compare(a, b))
	})
	return s
}

// healthSchema is the body of /livez and /readyz: {"status": status}.
func healthSchema(status string) *schema {
	return &schema{Type: "object", Required: []string{"status"}, Properties: properties{{"status", &schema{Type: "string", Const: status}}}}
}

// netTreatmentSchema enumerates how net IRR and TVPI count a line.
func netTreatmentSchema() *schema {
	return &schema{Type: "string", Enum: []string{string(fund.PaidIn), string(fund.PaidInReturned), string(fund.Distributed), string(fund.Excluded)}}
}

// name is the parameter's name in requests.
func (p parameterSpec) name(key string) string {
	if p.Name != "" {
		return p.Name
	}
	return key
}
