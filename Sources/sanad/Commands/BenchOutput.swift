import Foundation
import SanadCommandLine
import SanadCore
import SanadHost

/// A result field's type, as llama-bench declares it (`test::get_field_type`): how CSV, JSON and SQL write it.
enum BenchFieldType {
    case text, integer, boolean, real

    var sqlType: String {
        switch self {
        case .text: return "TEXT"
        case .integer, .boolean: return "INTEGER"
        case .real: return "REAL"
        }
    }
}

/// The fields of a result row: llama-bench's (b11434, `test::get_fields`, in its order and with its types), then
/// Sanad's own. A CPU engine of Sanad has no GPUs, CPU masks, polling, tensor overrides or MoE offload: those
/// fields carry what llama-bench writes for a plain CPU run, so tools that read llama-bench's files read these.
enum BenchFields {
    static let llamaBench: [(name: String, type: BenchFieldType)] = [
        ("build_commit", .text), ("build_number", .integer), ("cpu_info", .text), ("gpu_info", .text),
        ("backends", .text), ("model_filename", .text), ("model_type", .text), ("model_size", .integer),
        ("model_n_params", .integer), ("n_batch", .integer), ("n_ubatch", .integer), ("n_threads", .integer),
        ("cpu_mask", .text), ("cpu_strict", .boolean), ("poll", .integer), ("type_k", .text), ("type_v", .text),
        ("n_gpu_layers", .integer), ("n_cpu_moe", .integer), ("split_mode", .text), ("main_gpu", .integer),
        ("no_kv_offload", .boolean), ("flash_attn", .integer), ("devices", .text), ("tensor_split", .text),
        ("tensor_buft_overrides", .text), ("load_mode", .text), ("lazy_mode", .text), ("embeddings", .boolean),
        ("no_op_offload", .integer), ("no_host", .boolean), ("repack", .boolean), ("fit_target", .integer),
        ("fit_min_ctx", .integer), ("n_prompt", .integer), ("n_gen", .integer), ("n_depth", .integer),
        ("test_time", .text), ("avg_ns", .integer), ("stddev_ns", .integer), ("avg_ts", .real), ("stddev_ts", .real),
    ]

    /// Sanad's additions: the engine, load time, time to first token, peak memory, and why a row has no result.
    static let sanad: [(name: String, type: BenchFieldType)] = [
        ("sanad_backend", .text), ("load_ms", .real), ("ttft_ms", .real), ("peak_rss_bytes", .integer),
        ("error", .text),
    ]

    static let all = llamaBench + sanad

    /// What a plain CPU run of llama-bench writes for the fields that describe no setting of Sanad's engines (the
    /// cache types are replaced by the run's).
    static let cpuDefaults: [String: JSONValue] = [
        "gpu_info": .string(""), "backends": .string("CPU"), "cpu_mask": .string("0x0"), "cpu_strict": .bool(false),
        "poll": .number(50), "type_k": .string("f16"), "type_v": .string("f16"), "n_gpu_layers": .number(0),
        "n_cpu_moe": .number(0), "split_mode": .string("layer"), "main_gpu": .number(0),
        "no_kv_offload": .bool(false), "flash_attn": .number(-1), "devices": .string("auto"),
        "tensor_split": .string("0.00"), "tensor_buft_overrides": .string("none"), "load_mode": .string("mmap"),
        "lazy_mode": .string("auto"), "embeddings": .bool(false), "no_op_offload": .number(0),
        "no_host": .bool(false), "repack": .bool(true), "fit_target": .number(0), "fit_min_ctx": .number(0),
    ]

    /// A value as llama-bench's CSV and SQL write it: bools as 0/1, reals with six decimals, null as empty.
    static func text(_ value: JSONValue?, _ type: BenchFieldType) -> String {
        switch value {
        case .string(let s): return s
        case .bool(let b): return b ? "1" : "0"
        case .number(let n): return type == .real ? String(format: "%.6f", n) : String(Int64(n))
        case nil, .null: return ""
        case .some(let other): return other.jsonString
        }
    }

    /// A value as llama-bench's JSON writes it: typed, reals with six decimals.
    static func json(_ value: JSONValue?, _ type: BenchFieldType) -> String {
        switch value {
        case .number(let n) where type == .real: return String(format: "%.6f", n)
        case .number(let n) where type == .integer: return String(Int64(n))
        case nil: return "null"
        case .some(let v): return v.jsonString
        }
    }
}

/// Prints results as they come, in llama-bench's formats: md (with its `build:` footer), json, jsonl, csv, sql;
/// and svg, a bar chart of every result drawn when the run ends.
final class BenchPrinter {
    static let formats = ["md", "json", "jsonl", "csv", "sql", "svg"]
    let format: String
    /// Extra markdown columns, as llama-bench adds them when the values are not its defaults (`n_batch`, `n_ubatch`,
    /// `type_k`, `type_v`).
    let extraColumns: [String]
    let build: (commit: String, number: Int)
    var first = true
    /// What `svg` draws at the end: each row's run, test and t/s (nil: unavailable).
    private var plotted: [(run: BenchRun, test: BenchCommand.TestSpec, ts: Double?)] = []
    let testTime = ISO8601DateFormatter().string(from: Date())

    init(format: String, extraColumns: [String], build: (commit: String, number: Int)) {
        self.format = format
        self.extraColumns = extraColumns
        self.build = build
    }

    private var markdownColumns: [(title: String, width: Int, right: Bool)] {
        [("model", 30, false), ("size", 10, true), ("params", 10, true), ("backend", 10, false), ("threads", 7, true)]
            + extraColumns.map { ($0, 8, true) } + [("test", 15, true), ("t/s", 20, true)]
    }

    func begin() {
        switch format {
        case "md":
            print("|" + markdownColumns.map { " " + pad($0.title, $0.width, right: $0.right) + " |" }.joined())
            print(
                "|"
                    + markdownColumns.map {
                        " " + String(repeating: "-", count: $0.width - 1) + ($0.right ? ":" : "-") + " |"
                    }
                    .joined())
        case "json": print("[")
        case "csv": print(BenchFields.all.map(\.name).joined(separator: ","))
        case "sql":
            print("CREATE TABLE IF NOT EXISTS sanad_bench (")
            let columns = BenchFields.all.map { "  \($0.name) \($0.type.sqlType)" }
            print(columns.joined(separator: ",\n"))
            print(");\n")
        default: break
        }
    }

    func end() {
        switch format {
        case "json": print(first ? "]" : "\n]")
        case "md": print("\nbuild: \(build.commit) (\(build.number))")
        case "svg": print(BenchChart(results: plotted, build: build.commit).svg, terminator: "")
        default: break
        }
    }

    /// One row's fields: the run's settings, then `values` (results, or the reason it has none).
    func row(_ run: BenchRun, test: BenchCommand.TestSpec, values: [String: JSONValue]) -> [String: JSONValue] {
        var row = BenchFields.cpuDefaults
        let settings: [String: JSONValue] = [
            "build_commit": .string(build.commit), "build_number": .number(Double(build.number)),
            "cpu_info": .string(run.cpu), "sanad_backend": .string(run.backend),
            "model_filename": .string(run.model.filename), "model_type": .string(run.model.type),
            "model_size": .number(Double(run.model.size)), "model_n_params": .number(Double(run.model.parameters)),
            "n_batch": .number(Double(run.batch)), "n_ubatch": .number(Double(run.ubatch)),
            "n_threads": .number(Double(run.threads)), "n_prompt": .number(Double(test.prompt)),
            "n_gen": .number(Double(test.gen)), "n_depth": .number(Double(test.depth)),
            "type_k": .string(run.cacheTypeK.cacheTypeName), "type_v": .string(run.cacheTypeV.cacheTypeName),
            "test_time": .string(testTime),
        ]
        row.merge(settings) { $1 }
        row.merge(values) { $1 }
        return row
    }

    func result(_ r: BenchResult) {
        let values: [String: JSONValue] = [
            "avg_ns": .number(Double(UInt64(r.avgNs))), "stddev_ns": .number(Double(UInt64(r.stddevNs))),
            "avg_ts": .number(r.avgTs), "stddev_ts": .number(r.stddevTs),
            "load_ms": .number(Double(r.loadNs) / 1e6),
            "ttft_ms": r.firstTokenNs.isEmpty ? .null : .number(mean(r.firstTokenNs.map { Double($0) }) / 1e6),
            "peak_rss_bytes": r.peakResidentBytes.map { .number(Double($0)) } ?? .null,
            "samples_ns": .array(r.samplesNs.map { .number(Double($0)) }),
            "samples_ts": .array(r.samplesTs.map { .number($0) }),
        ]
        emit(
            row(r.run, test: r.test, values: values), run: r.run, test: r.test,
            markdown: String(
                format: "%.2f ± %.2f", r.avgTs, r.stddevTs))
    }

    func unavailable(_ run: BenchRun, reason: String, tests: [BenchCommand.TestSpec]) {
        for test in tests {
            emit(
                row(run, test: test, values: ["error": .string(reason)]), run: run, test: test, markdown: "unavailable")
        }
    }

    private func emit(_ row: [String: JSONValue], run: BenchRun, test: BenchCommand.TestSpec, markdown: String) {
        switch format {
        case "svg":
            if case .number(let ts) = row["avg_ts"] {
                plotted.append((run, test, ts))
            } else {
                plotted.append((run, test, nil))
            }
            return
        case "md":
            let size = String(format: "%.2f MiB", Double(run.model.size) / 1_048_576)
            var cells = [
                run.model.type, size, formatParameterCount(run.model.parameters), run.backend, String(run.threads),
            ]
            for column in extraColumns {
                switch column {
                case "n_batch": cells.append(String(run.batch))
                case "n_ubatch": cells.append(String(run.ubatch))
                case "type_k": cells.append(run.cacheTypeK.cacheTypeName)
                default: cells.append(run.cacheTypeV.cacheTypeName)
                }
            }
            cells += [test.name, markdown]
            print("|" + zip(markdownColumns, cells).map { " " + pad($1, $0.width, right: $0.right) + " |" }.joined())
        case "json", "jsonl":
            // llama-bench's key order; the per-repetition samples last (JSON only, as llama-bench).
            var pairs = BenchFields.all.map { "\"\($0.name)\": " + BenchFields.json(row[$0.name], $0.type) }
            for key in ["samples_ns", "samples_ts"] {
                if let v = row[key] { pairs.append("\"\(key)\": \(v.jsonString)") }
            }
            if format == "jsonl" {
                print("{" + pairs.joined(separator: ", ") + "}")
            } else {
                print(
                    (first ? "" : ",\n") + "  {\n" + pairs.map { "    " + $0 }.joined(separator: ",\n") + "\n  }",
                    terminator: "")
            }
        case "csv":
            print(BenchFields.all.map { csvQuoted(BenchFields.text(row[$0.name], $0.type)) }.joined(separator: ","))
        default:  // sql
            let names = BenchFields.all.map(\.name).joined(separator: ", ")
            let values = BenchFields.all.map { sqlQuoted(BenchFields.text(row[$0.name], $0.type)) }
            print("INSERT INTO sanad_bench (\(names)) VALUES (\(values.joined(separator: ", ")));")
        }
        first = false
        fflush(cStandardOutput)
    }

    private func csvQuoted(_ text: String) -> String { "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    private func sqlQuoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }

    private func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        let count = text.count
        guard count < width else { return text }
        let spaces = String(repeating: " ", count: width - count)
        return right ? spaces + text : text + spaces
    }
}
