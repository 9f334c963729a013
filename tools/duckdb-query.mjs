// Runs queries, each in a fresh in-memory DuckDB, and prints their results
// as JSON, for tests that want a Parquet reader independent of the code
// under test (internal/duckdbtest runs it, one process for many queries:
// starting Node.js and loading DuckDB costs some 0.5 CPU-seconds). Installed
// by `make tools`.
//
// Requests on stdin, one JSON object a line:
//   {"sql": "SELECT ...", "setup": ["SET ...", ...]}
// Responses on stdout, one a line, in the order of the requests:
//   {"columns": [...], "types": [...], "rows": [[...], ...]}
// or, when the request or its statements fail, {"error": "..."}. It exits
// at the end of stdin.
//
// Every value is DuckDB's own text for it (CAST(... AS VARCHAR)), so DECIMAL
// keeps its exact digits and scale, DATE is YYYY-MM-DD and TIMESTAMP is
// DuckDB's text; NULL is null. "types" are the types of the query's own
// columns (DECIMAL(19,4), TIMESTAMP, ...).
//
// Statements that cannot be a subquery (PRAGMA, COPY, DDL) run as they are,
// and their values are rendered by @duckdb/node-api's toString instead,
// which is exact for text, integers and DECIMAL but not DuckDB's text for
// FLOAT/DOUBLE.
//
import { createInterface } from 'node:readline';
import { DuckDBInstance } from '@duckdb/node-api';

function parseRequest(text) {
  const req = JSON.parse(text);
  if (req === null || typeof req !== 'object' || Array.isArray(req)) {
    throw new Error('request must be a JSON object');
  }
  if (typeof req.sql !== 'string' || req.sql.trim() === '') {
    throw new Error('request.sql must be a non-empty string');
  }
  const setup = req.setup ?? [];
  if (!Array.isArray(setup) || setup.some((s) => typeof s !== 'string')) {
    throw new Error('request.setup must be an array of strings');
  }
  return { sql: req.sql, setup };
}

// stripTerminator drops trailing semicolons and blanks, which a subquery
// cannot have.
function stripTerminator(sql) {
  return sql.replace(/[\s;]+$/, '');
}

async function query(connection, sql) {
  // Preparing does not run the statement; it gives the column names and
  // types as the query itself has them.
  const prepared = await connection.prepare(sql);
  const columns = [];
  const types = [];
  for (let i = 0; i < prepared.columnCount; i++) {
    columns.push(prepared.columnName(i));
    types.push(prepared.columnType(i).toString());
  }
  prepared.destroySync();

  // The newline keeps a trailing -- comment from swallowing the parenthesis.
  let wrapped;
  try {
    wrapped = await connection.prepare(
      `SELECT CAST(COLUMNS(*) AS VARCHAR) FROM (\n${sql}\n)`,
    );
  } catch {
    wrapped = undefined;
  }

  if (wrapped !== undefined) {
    const reader = await wrapped.runAndReadAll();
    wrapped.destroySync();
    if (reader.columnCount !== columns.length) {
      throw new Error(
        `internal: ${reader.columnCount} columns cast to VARCHAR, query has ${columns.length}`,
      );
    }
    // Values of VARCHAR columns are JS strings or null.
    return { columns, types, rows: reader.getRows() };
  }

  const reader = await connection.runAndReadAll(sql);
  const rows = reader
    .getRows()
    .map((row) => row.map((v) => (v === null ? null : String(v))));
  return {
    columns: reader.columnNames(),
    types: reader.columnTypes().map((t) => t.toString()),
    rows,
  };
}

// run answers one request line in a database of its own.
async function run(line) {
  const req = parseRequest(line);
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    for (const statement of req.setup) {
      await connection.run(statement);
    }
    return await query(connection, stripTerminator(req.sql));
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

async function main() {
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === '') {
      continue;
    }
    let response;
    try {
      response = await run(line);
    } catch (err) {
      response = { error: String(err?.message ?? err) };
    }
    await new Promise((resolve, reject) => {
      process.stdout.write(JSON.stringify(response) + '\n', (err) =>
        err ? reject(err) : resolve(),
      );
    });
  }
}

main().catch((err) => {
  process.stderr.write(`duckdb-query: ${err?.message ?? err}\n`);
  process.exitCode = 1;
});
