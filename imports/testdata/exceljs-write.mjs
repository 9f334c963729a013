// Writes a workbook with exceljs (the npm package, pinned in
// tools/package.json), as an administrator's tools would, for the imports
// tests: files no code of fundsvc wrote. Reads a JSON spec on stdin:
//   {"xlsx": path, "csv": path, "sheet": name, "rows": [[cell, ...], ...]}
// where a cell is null (empty), {"s": text}, {"n": number text},
// {"d": "YYYY-MM-DD"} (a date cell) or {"f": formula, "n": cached number}.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";

const require = createRequire(process.env.FUNDSVC_TOOLS + "/package.json");
const ExcelJS = require("exceljs");

const spec = JSON.parse(readFileSync(0, "utf8"));
const wb = new ExcelJS.Workbook();
const ws = wb.addWorksheet(spec.sheet);
for (const row of spec.rows) {
  ws.addRow(
    row.map((c) => {
      if (c === null) return null;
      if ("f" in c) return { formula: c.f, result: Number(c.n) };
      if ("n" in c) return Number(c.n);
      if ("d" in c) {
        const [y, m, d] = c.d.split("-").map(Number);
        return new Date(Date.UTC(y, m - 1, d));
      }
      return c.s;
    }),
  );
}
if (spec.xlsx) await wb.xlsx.writeFile(spec.xlsx);
if (spec.csv) await wb.csv.writeFile(spec.csv, { sheetName: spec.sheet, dateFormat: "YYYY-MM-DD", dateUTC: true });
