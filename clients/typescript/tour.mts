// The tour of the demo data (docs/tour.md), walked by a
// client typed from the OpenAPI document: openapi-typescript generates
// openapi.ts from api/openapi.json, and openapi-fetch's createClient<paths>
// types every path, parameter, body and answer from it. Each step reads the
// fields the tour shows by name and compares them with the tour's
// figures (worked out by hand in api/golden_test.go's TestDemoFigures), so a
// field the contract renames or retypes fails tsc, and an answer that drifts
// from the contract or the demo fails the run, naming the step.
//
// internal/tsclienttest (make test) generates the types, compiles this file
// with tsc and runs it with node against the API on a freshly seeded demo.
// TOUR_URL is the API's base URL, ADMIN an admin token of FUND_A and
// INVESTOR a token of INVESTOR_1 (the names make run exports);
// TOUR_IMPORT_CSV holds docs/examples/demo-2026q1-statements.csv, the file
// the tour imports. The tour writes (it restates DOC006, creates DOC008
// and imports DOC009), so it runs once per fresh demo.
//
// Each step gathers the fields it checks in one object, beside the tour's
// figures in the same shape: a renamed field is one line to change.
import createClient from "openapi-fetch";
import type { components, paths } from "./openapi.js";

type S = components["schemas"];

// The one Node global the tour uses (no @types/node is pinned for it).
declare const process: { env: Record<string, string | undefined>; exitCode?: number };

type DocumentRequest = S["DocumentRequest"];

function setting(name: string): string {
  const v = process.env[name];
  if (!v) {
    throw new Error(`${name} is not set: the tour needs TOUR_URL, ADMIN, INVESTOR and TOUR_IMPORT_CSV`);
  }
  return v;
}

const baseUrl = setting("TOUR_URL");
const admin = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${setting("ADMIN")}` } });
const investor = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${setting("INVESTOR")}` } });

let checks = 0;
const failures: string[] = [];

// same records whether what the answer holds is what the tour shows,
// compared as JSON; want takes got's type, so a figure of the wrong type
// or an enum value the contract no longer has fails tsc.
function same<T>(what: string, got: T, want: NoInfer<T>): void {
  checks++;
  const g = JSON.stringify(got);
  const w = JSON.stringify(want);
  if (g !== w) {
    failures.push(`${what}:\n      got  ${g}\n      want ${w}`);
  }
}

type Answer<D, E> = { data?: D; error?: E; response: Response };

// answered returns the body of an answer of the status wanted, or throws
// with the status and problem it got instead.
async function answered<D, E>(call: Promise<Answer<D, E>>, status: number): Promise<{ body: D; headers: Headers }> {
  const { data, error, response } = await call;
  if (response.status !== status || data === undefined) {
    throw new Error(`${response.url}: status ${response.status}, want ${status}: ${JSON.stringify(error ?? data)}`);
  }
  return { body: data, headers: response.headers };
}

// refused returns the problem of an answer refused with the status wanted,
// after checking it is problem+json.
async function refused<D, E>(call: Promise<Answer<D, E>>, status: number): Promise<{ problem: E; headers: Headers }> {
  const { data, error, response } = await call;
  if (response.status !== status || error === undefined) {
    throw new Error(`${response.url}: status ${response.status}, want ${status}: ${JSON.stringify(error ?? data)}`);
  }
  same(`${response.url}: Content-Type`, response.headers.get("Content-Type"), "application/problem+json");
  return { problem: error, headers: response.headers };
}

const doc = (documentId: string) => ({ params: { path: { documentId } } });
const position = (positionId: string) => ({ params: { path: { positionId } } });
const positionAsOf = (positionId: string, asOf: string) => ({ params: { path: { positionId }, query: { asOf } } });

// The tour's correction of distribution notice no. 2: the treaty rate
// withheld from INVESTOR_3's dividend, every position sent again.
const correctedDistribution: DocumentRequest = {
  fundId: "FUND_A",
  kind: "distribution_notice",
  asOf: "2025-12-08",
  title: "Distribution notice no. 2, paid 2025-12-15 (corrected: treaty rate withholding)",
  capitalActivity: {
    amount: "96250.00",
    status: "completed",
    activityDate: "2025-12-15",
    description: "Distribution no. 2: partial sale of Company A and its dividend",
  },
  positions: [
    {
      positionId: "POSITION_1",
      investorId: "INVESTOR_1",
      distribution: { amount: "55000.00", status: "completed", paymentDate: "2025-12-15", returnOfCapital: "40000.00", realizedGain: "12000.00", income: "3000.00" },
    },
    {
      positionId: "POSITION_2",
      investorId: "INVESTOR_2",
      distribution: { amount: "27500.00", status: "completed", paymentDate: "2025-12-15", returnOfCapital: "20000.00", realizedGain: "6000.00", income: "1500.00" },
    },
    {
      positionId: "POSITION_3",
      investorId: "INVESTOR_3",
      distribution: {
        amount: "13750.00", status: "completed", paymentDate: "2025-12-15", returnOfCapital: "10000.00", realizedGain: "3000.00", income: "750.00",
        withholding: "112.50",
      },
    },
  ],
};

// The tour's first notice of 2026, sent with an Idempotency-Key.
const distributionNo3: DocumentRequest = {
  fundId: "FUND_A",
  kind: "distribution_notice",
  asOf: "2026-02-13",
  title: "Distribution notice no. 3, paid 2026-02-20",
  positions: [
    { positionId: "POSITION_1", investorId: "INVESTOR_1", distribution: { amount: "20000.00", status: "completed", paymentDate: "2026-02-20", income: "20000.00" } },
    { positionId: "POSITION_2", investorId: "INVESTOR_2", distribution: { amount: "10000.00", status: "completed", paymentDate: "2026-02-20", income: "10000.00" } },
    {
      positionId: "POSITION_3",
      investorId: "INVESTOR_3",
      distribution: { amount: "5000.00", status: "completed", paymentDate: "2026-02-20", income: "5000.00", withholding: "750.00" },
    },
  ],
};

// reconciled is DOC007's reconciliation as the tour shows it: each
// position's differences of contributions, distributions and ending
// unfunded commitment.
async function reconciled(): Promise<string[][]> {
  const { body } = await answered(admin.GET("/v1/documents/{documentId}/reconciliation", doc("DOC007")), 200);
  return body.reconciliations.map((r) => [r.positionId, r.contributions.difference, r.distributions.difference, r.endingUnfunded?.difference ?? "-"]);
}

const noDifferences = [
  ["POSITION_1", "0.00", "0.00", "0.00"],
  ["POSITION_2", "0.00", "0.00", "0.00"],
  ["POSITION_3", "0.00", "0.00", "0.00"],
];

const steps: [string, () => Promise<void>][] = [
  ["the fund's documents, in date order", async () => {
    const { body } = await answered(admin.GET("/v1/funds/{fundId}/documents", { params: { path: { fundId: "FUND_A" } } }), 200);
    same("documents", body.items.map((d) => `${d.documentId}  ${d.asOf}  ${d.kind}  v${d.version}  ${d.title}`), [
      "DOC001  2025-07-15  capital_call_notice  v2  Capital call notice no. 1, due 2025-08-01",
      "DOC002  2025-09-10  distribution_notice  v1  Distribution notice no. 1, paid 2025-09-15: recallable return of capital",
      "DOC003  2025-09-30  capital_account_statement  v1  Q3 2025 capital account statements",
      "DOC004  2025-10-06  capital_call_notice  v1  Capital call notice no. 2, due 2025-10-20",
      "DOC005  2025-11-14  capital_call_notice  v1  Capital call notice no. 3, due 2025-12-01: recall of distribution no. 1",
      "DOC006  2025-12-08  distribution_notice  v1  Distribution notice no. 2, paid 2025-12-15",
      "DOC007  2025-12-31  capital_account_statement  v2  Q4 2025 capital account statements (restated: Company B revalued)",
    ]);
  }],

  ["a document's overview: its versions, the fund's capital activity and its positions", async () => {
    const { body: o } = await answered(admin.GET("/v1/documents/{documentId}", doc("DOC001")), 200);
    const activities = o.capitalActivities;
    same("capital activities, latest first", [...(activities?.latest ? [activities.latest] : []), ...(activities?.earlier ?? [])]
      .map((a) => ({ version: a.version, amount: a.amount, status: a.status })), [
      { version: 2, amount: "718500.00", status: "completed" },
      { version: 1, amount: "718500.00", status: "pending" },
    ]);
    same("versions", { latest: o.documents?.latest.version, earlier: o.documents?.earlier.map((h) => h.version) }, { latest: 2, earlier: [1] });
    same("positions and their calls", Object.entries(o.positions).map(([id, p]) => [id, p.investorId, p.capitalCalls.map((c) => c.amount)]), [
      ["POSITION_1", "INVESTOR_1", ["409500.00"]],
      ["POSITION_2", "INVESTOR_2", ["206000.00"]],
      ["POSITION_3", "INVESTOR_3", ["103000.00"]],
    ]);
    const { body: a } = await answered(admin.GET("/v1/documents/{documentId}/analysis", doc("DOC001")), 200);
    same("analysis", a.positions.map((p) => ({ positionId: p.positionId, called: p.called, unfunded: p.unfunded })), [
      { positionId: "POSITION_1", called: "409500.00", unfunded: "1590500.00" },
      { positionId: "POSITION_2", called: "206000.00", unfunded: "794000.00" },
      { positionId: "POSITION_3", called: "103000.00", unfunded: "397000.00" },
    ]);
  }],

  ["the recall in call notice no. 3, a typed line that reduces unfunded commitment", async () => {
    const { body } = await answered(admin.GET("/v1/positions/{positionId}/capital-calls", {
      params: { path: { positionId: "POSITION_1" }, query: { document: "DOC005" } },
    }), 200);
    same("capital calls", body.items.map((c) => ({
      amount: c.amount, dueDate: c.dueDate,
      transactions: c.transactions?.map((t) => ({ transactionType: t.transactionType, amount: t.amount, unfundedEffect: t.unfundedEffect })),
    })), [
      { amount: "100000.00", dueDate: "2025-12-01", transactions: [{ transactionType: "investment", amount: "100000.00", unfundedEffect: "reduces" }] },
    ]);
  }],

  ["a call's typed lines: those its notice states, and with transactions=all those mapped from its line items", async () => {
    const calls = async (transactions: "stated" | "all") => (await answered(admin.GET("/v1/positions/{positionId}", {
      params: { path: { positionId: "POSITION_1" }, query: { itemType: "capital_call", transactions } },
    }), 200)).body.items.map((c) => ({
      documentId: c.documentId,
      transactions: c.transactions?.map((t) => ({ transactionType: t.transactionType, amount: t.amount, stated: t.stated })),
    }));
    type Line = Pick<S["TransactionLine"], "transactionType" | "amount" | "stated">;
    const mapped = (investment: string): Line[] => [
      { transactionType: "investment", amount: investment, stated: false },
      { transactionType: "management_fee_inside_commitment", amount: "7500.00", stated: false },
      { transactionType: "partnership_expenses", amount: "2000.00", stated: false },
    ];
    const stated: Line[] = [{ transactionType: "investment", amount: "100000.00", stated: true }];
    same("stated lines", await calls("stated"), [
      { documentId: "DOC001", transactions: undefined },
      { documentId: "DOC004", transactions: undefined },
      { documentId: "DOC005", transactions: stated },
    ]);
    same("every line", await calls("all"), [
      { documentId: "DOC001", transactions: mapped("400000.00") },
      { documentId: "DOC004", transactions: mapped("500000.00") },
      { documentId: "DOC005", transactions: stated },
    ]);
  }],

  ["a position's summary at the year end and at the Q3 quarter end", async () => {
    const { body: s } = await answered(admin.GET("/v1/positions/{positionId}/summary", positionAsOf("POSITION_1", "2025-12-31")), 200);
    same("summary at 2025-12-31", {
      commitment: s.commitment, called: s.called, paidIn: s.paidIn, outstanding: s.outstanding, distributed: s.distributed.gross.total, recallable: s.recallable,
      unfunded: s.unfunded, from: s.sources.unfunded,
    }, {
      commitment: "2000000.00", called: "1019000.00", paidIn: "1019000.00", outstanding: "0.00", distributed: "155000.00", recallable: "100000.00",
      unfunded: { reported: "1081000.00", computed: "1081000.00", difference: "0.00" },
      from: { documentId: "DOC007", version: 2, asOf: "2025-12-31" },
    });
    const { body: q3 } = await answered(admin.GET("/v1/positions/{positionId}/summary", positionAsOf("POSITION_1", "2025-09-30")), 200);
    same("summary at 2025-09-30", { unfunded: q3.unfunded, from: q3.sources.unfunded?.documentId }, {
      unfunded: { reported: "1690500.00", computed: "1690500.00", difference: "0.00" }, from: "DOC003",
    });
  }],

  ["a position's cash flows with running totals, and the tax withheld", async () => {
    const { body } = await answered(admin.GET("/v1/positions/{positionId}/cashflows", position("POSITION_3")), 200);
    same("cash flows", body.cashflows.map((c) => `${c.effectiveDate}  ${c.flowType}  ${c.amount}  withheld ${c.withholding ?? "-"}  cumulative net cash flow ${c.cumulativeNetCashflow}`), [
      "2025-08-01  contribution  103000.00  withheld -  cumulative net cash flow -103000.00",
      "2025-09-15  distribution  25000.00  withheld 0.00  cumulative net cash flow -78000.00",
      "2025-10-20  contribution  128000.00  withheld -  cumulative net cash flow -206000.00",
      "2025-12-01  contribution  25000.00  withheld -  cumulative net cash flow -231000.00",
      "2025-12-15  distribution  13750.00  withheld 225.00  cumulative net cash flow -217475.00",
    ]);
  }],

  ["the investor's positions, with an investor token", async () => {
    const investorPath = { params: { path: { investorId: "INVESTOR_1" } } };
    const { body: list } = await answered(investor.GET("/v1/investors/{investorId}/positions", investorPath), 200);
    same("positions", list.items.map((p) => [p.positionId, p.fundId, p.currency]), [["POSITION_1", "FUND_A", "USD"]]);
    const { body: s } = await answered(investor.GET("/v1/investors/{investorId}/summary", investorPath), 200);
    same("summary", {
      positions: s.positions.map((p) => p.positionId),
      totals: s.totals.map((t) => ({ currency: t.currency, commitment: t.commitment, positions: t.positions })),
    }, { positions: ["POSITION_1"], totals: [{ currency: "USD", commitment: "2000000.00", positions: 1 }] });
  }],

  ["a position's performance on a date", async () => {
    const at = async (asOf: string) =>
      (await answered(admin.GET("/v1/positions/{positionId}/performance", positionAsOf("POSITION_1", asOf)), 200)).body;
    const p = await at("2025-12-31");
    same("at 2025-12-31", {
      nav: p.nav.value, called: p.called, paidIn: p.paidIn, outstanding: p.outstanding, distributed: p.distributed, dpi: p.dpi, rvpi: p.rvpi, tvpi: p.tvpi,
      irr: { cumulativeReturn: p.irr.cumulativeReturn, annualised: p.irr.annualised, days: p.irr.days, rate: p.irr.rate ?? "-" },
    }, {
      nav: "890000.00", called: "1019000.00", paidIn: "1019000.00", outstanding: "0.00", distributed: "155000.00", dpi: "0.152110", rvpi: "0.873405", tvpi: "1.025515",
      irr: { cumulativeReturn: "0.043927", annualised: false, days: 152, rate: "-" },
    });
    const between = (await at("2025-11-15")).nav;
    same("at 2025-11-15, between statements", {
      status: between.status, value: between.value, statementNav: between.statementNav,
      contributionsAfter: between.contributionsAfter, distributionsAfter: between.distributionsAfter,
    }, { status: "rolled_forward", value: "818500.00", statementNav: "309000.00", contributionsAfter: "509500.00", distributionsAfter: "0.00" });
    const q3 = await at("2025-09-30");
    same("at 2025-09-30, the J-curve", { nav: q3.nav.value, tvpi: q3.tvpi, cumulativeReturn: q3.irr.cumulativeReturn }, { nav: "309000.00", tvpi: "0.998779", cumulativeReturn: "-0.001300" });
  }],

  ["the investor's performance and the fund's, pooled per currency", async () => {
    const { body: i } = await answered(investor.GET("/v1/investors/{investorId}/performance", {
      params: { path: { investorId: "INVESTOR_1" }, query: { asOf: "2025-12-31" } },
    }), 200);
    same("the investor's totals", i.totals.map((c) => ({ currency: c.currency, nav: c.nav.value, tvpi: c.tvpi, cumulativeReturn: c.irr.cumulativeReturn })), [
      { currency: "USD", nav: "890000.00", tvpi: "1.025515", cumulativeReturn: "0.043927" },
    ]);
    const { body: f } = await answered(admin.GET("/v1/funds/{fundId}/performance", {
      params: { path: { fundId: "FUND_A" }, query: { asOf: "2025-12-31" } },
    }), 200);
    same("the fund's", f.currencies.map((c) => ({
      currency: c.currency, nav: c.nav.value, paidIn: c.paidIn, distributed: c.distributed, dpi: c.dpi, rvpi: c.rvpi, tvpi: c.tvpi, cumulativeReturn: c.irr.cumulativeReturn,
    })), [
      { currency: "USD", nav: "1557500.00", paidIn: "1787000.00", distributed: "271250.00", dpi: "0.151791", rvpi: "0.871572", tvpi: "1.023363", cumulativeReturn: "0.040186" },
    ]);
  }],

  ["each Q4 statement reconciled with the notices of its quarter", async () => {
    same("DOC007's differences", await reconciled(), noDifferences);
  }],

  ["the restated Q4 statement: each ending NAV by version", async () => {
    const endingNav = async (version: number) => {
      const { body } = await answered(admin.GET("/v1/documents/{documentId}/versions/{version}", {
        params: { path: { documentId: "DOC007", version: String(version) } },
      }), 200);
      // A number answers the version whole (DocumentVersion); only `latest` answers its header.
      return { version: body.version, endingNav: "positions" in body ? body.positions.map((p) => p.capitalAccount?.endingNav) : "a header" };
    };
    same("version 1", await endingNav(1), { version: 1, endingNav: ["885000.00", "442500.00", "221250.00"] });
    same("version 2", await endingNav(2), { version: 2, endingNav: ["890000.00", "445000.00", "222500.00"] });
  }],

  ["a restatement with If-Match, keeping every position; a second writer of the same version is refused", async () => {
    const { headers } = await answered(admin.GET("/v1/documents/{documentId}", doc("DOC006")), 200);
    same("DOC006's ETag", headers.get("ETag"), '"1"');
    const put = () => admin.PUT("/v1/documents/{documentId}", {
      params: { path: { documentId: "DOC006" }, header: { "If-Match": '"1"' } },
      body: correctedDistribution,
    });
    const { body: v2, headers: h2 } = await answered(put(), 200);
    same("the restatement", {
      etag: h2.get("ETag"), version: v2.version, title: v2.title,
      distributions: v2.positions.map((p) => [p.positionId, p.distribution?.amount, p.distribution?.withholding ?? "-"]),
    }, {
      etag: '"2"', version: 2, title: "Distribution notice no. 2, paid 2025-12-15 (corrected: treaty rate withholding)",
      distributions: [["POSITION_1", "55000.00", "-"], ["POSITION_2", "27500.00", "-"], ["POSITION_3", "13750.00", "112.50"]],
    });
    const { problem } = await refused(put(), 412);
    same("the second writer's problem", { type: problem.type, status: problem.status }, { type: "/problems/precondition_failed", status: 412 });
    const { body: s } = await answered(admin.GET("/v1/positions/{positionId}/summary", position("POSITION_3")), 200);
    same("POSITION_3's distributions, withheld and net", { withheld: s.distributed.withholding.total, net: s.distributed.net.total }, {
      withheld: "112.50", net: "38637.50",
    });
    same("DOC007's differences after the correction", await reconciled(), noDifferences);
  }],

  ["bad input is answered problem+json, naming the field, and changes nothing", async () => {
    const bad: DocumentRequest = {
      fundId: "FUND_A", kind: "capital_call_notice", title: "x", asOf: "2025-10-06",
      positions: [{ positionId: "POSITION_1", investorId: "INVESTOR_1", capitalCall: { amount: "1.00001" } }],
    };
    const { problem } = await refused(admin.PUT("/v1/documents/{documentId}", { ...doc("DOC004"), body: bad }), 400);
    same("the problem", { type: problem.type, status: problem.status, field: problem.field }, {
      type: "/problems/invalid", status: 400, field: "positions[0].capitalCall.amount",
    });
    const { body, headers } = await answered(admin.GET("/v1/documents/{documentId}", doc("DOC004")), 200);
    same("DOC004 afterwards", { etag: headers.get("ETag"), version: body.version, call: body.positions["POSITION_1"]?.capitalCalls.map((c) => c.amount) }, {
      etag: '"1"', version: 1, call: ["509500.00"],
    });
  }],

  ["an investor reads its own position and not another investor's (404, as if absent)", async () => {
    const { body } = await answered(investor.GET("/v1/positions/{positionId}", position("POSITION_1")), 200);
    same("POSITION_1's investors", [...new Set(body.items.map((it) => it.investorId))], ["INVESTOR_1"]);
    const { problem } = await refused(investor.GET("/v1/positions/{positionId}", position("POSITION_2")), 404);
    same("POSITION_2's problem", { type: problem.type, status: problem.status }, { type: "/problems/not_found", status: 404 });
  }],

  ["an idempotent PUT repeated: the same answer, replayed, nothing written twice", async () => {
    const put = () => admin.PUT("/v1/documents/{documentId}", {
      params: { path: { documentId: "DOC008" }, header: { "Idempotency-Key": "fund-a-distribution-3" } },
      body: distributionNo3,
    });
    const first = await answered(put(), 201);
    const again = await answered(put(), 201);
    same("ETags and Idempotent-Replayed", [first, again].map((a) => [a.headers.get("ETag"), a.headers.get("Idempotent-Replayed")]), [
      ['"1"', null],
      ['"1"', "true"],
    ]);
    same("the replayed answer", again.body, first.body);
    same("the new document", { version: first.body.version, positions: first.body.positions.map((p) => p.distribution?.amount) }, {
      version: 1, positions: ["20000.00", "10000.00", "5000.00"],
    });
    const { body } = await answered(admin.GET("/v1/documents/{documentId}/versions", doc("DOC008")), 200);
    same("DOC008's versions", { latest: body.latest?.version, versions: body.versions.map((v) => v.version) }, { latest: 1, versions: [1] });
  }],

  ["a quarter's statements from a spreadsheet: a dry run, the import, its repeat, the figures", async () => {
    const post = (dryRun: boolean) => admin.POST("/v1/imports", {
      params: { query: { dryRun: dryRun ? "true" : "false" } },
      body: setting("TOUR_IMPORT_CSV"),
      bodySerializer: (csv: string) => csv,
      headers: { "Content-Type": "text/csv" },
    });
    const checked = await answered(post(true), 200);
    same("the dry run", { valid: checked.body.valid, problems: checked.body.problems, documents: checked.body.documents.map((d) => [d.documentId, d.outcome, d.positions]) }, {
      valid: true, problems: [], documents: [["DOC009", "ready", 3]],
    });
    const outcomes = [];
    for (let run = 1; run <= 2; run++) {
      const { body } = await answered(post(false), 200);
      outcomes.push(body.documents.map((d) => [d.documentId, d.outcome, d.version]));
    }
    same("the import, then its repeat", outcomes, [[["DOC009", "created", 1]], [["DOC009", "unchanged", 1]]]);
    const { body } = await answered(admin.GET("/v1/positions/{positionId}/performance", {
      params: { path: { positionId: "POSITION_1" }, query: { asOf: "2026-03-31" } },
    }), 200);
    same("POSITION_1 at 2026-03-31", { nav: body.nav.value, statement: body.nav.statement?.documentId, tvpi: body.tvpi }, {
      nav: "920000.00", statement: "DOC009", tvpi: "1.074583",
    });
  }],
];

for (const [name, run] of steps) {
  const before = failures.length;
  try {
    await run();
  } catch (e) {
    failures.push(`stopped: ${e instanceof Error ? e.message : String(e)}`);
  }
  const found = failures.slice(before);
  console.log(`${found.length === 0 ? "ok  " : "FAIL"} ${name}`);
  for (const f of found) {
    console.log(`    ${f}`);
  }
}
const failed = failures.length;
console.log(failed === 0
  ? `tour: ${steps.length} steps, ${checks} checks, all as docs/tour.md shows`
  : `tour: ${failed} of ${checks} checks failed; each FAIL above names the step, and the figure got and wanted`);
if (failed > 0) {
  process.exitCode = 1;
}
