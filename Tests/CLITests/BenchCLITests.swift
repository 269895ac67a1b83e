import Foundation
import SanadTestSupport
import Testing

@Suite("sanad bench", .enabled(if: SanadCLI.executable != nil && TestPaths.model(TestPaths.smolLM2) != nil))
struct BenchCLITests {
    @Test("JSON output carries llama-bench's fields and Sanad's own, one row per backend and test")
    func jsonShape() throws {
        let r = try SanadCLI.run([
            "bench", "-m", TestPaths.smolLM2, "--backends", "pure-swift", "-p", "8", "-n", "4", "-r", "2", "-t", "1",
            "-o", "json",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("repetition 2/2"), "progress goes to stderr")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])
        #expect(rows.count == 2)
        for key in [
            "model_filename", "model_type", "model_size", "model_n_params", "n_threads", "n_prompt", "n_gen", "avg_ns",
            "stddev_ns", "avg_ts", "stddev_ts", "samples_ts", "samples_ns", "test_time", "sanad_backend",
            "peak_rss_bytes", "load_ms", "ttft_ms",
        ] {
            #expect(rows[0][key] != nil, "missing \(key)")
        }
        #expect(rows.map { $0["n_prompt"] as? Int } == [8, 0])
        #expect(rows.map { $0["n_gen"] as? Int } == [0, 4])
        let samples = try #require(rows[0]["samples_ts"] as? [Double])
        #expect(samples.count == 2 && samples.allSatisfy { $0 > 0 })
        let avg = try #require(rows[0]["avg_ts"] as? Double)
        #expect(abs(avg - samples.reduce(0, +) / 2) < 1e-6 * avg)
        #expect(((rows[0]["avg_ns"] as? NSNumber)?.doubleValue ?? 0) > 0)
    }

    @Test("-d fills the cache first: every test again at each depth, named and reported as llama-bench does")
    func depth() throws {
        let r = try SanadCLI.run([
            "bench", "-m", TestPaths.smolLM2, "--backends", "pure-swift", "-p", "8", "-n", "4", "-d", "0,16", "-r", "1",
            "-t", "1", "-o", "json",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("depth run 1/1"), "the depth run is announced")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])
        #expect(rows.map { $0["n_depth"] as? Int } == [0, 0, 16, 16])
        #expect(rows.map { $0["n_prompt"] as? Int } == [8, 0, 8, 0])
        let markdown = try SanadCLI.run([
            "bench", "-m", TestPaths.smolLM2, "--backends", "pure-swift", "-p", "8", "-n", "0", "-d", "16", "-r", "1",
            "-t", "1",
        ])
        #expect(markdown.stdout.contains("pp8 @ d16"), "\(markdown.stdout)")
        let csv = try SanadCLI.run([
            "bench", "-m", TestPaths.smolLM2, "--backends", "pure-swift", "-p", "0", "-n", "2", "-d", "16", "-r", "1",
            "-t", "1", "-o", "csv",
        ])
        let lines = csv.stdout.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        let column = try #require(lines.first?.firstIndex(of: "n_depth"))
        #expect(lines.count == 2 && lines[1][column] == "\"16\"", "\(csv.stdout)")
        #expect(try SanadCLI.run(["bench", "-d", "-5"]).status == 64)
    }

    @Test("markdown has llama-bench's columns; an unavailable engine is said on stderr, a row only when named")
    func markdown() throws {
        let missing = ["SANAD_LIBLLAMA": "/nonexistent/libllama.so"]
        let r = try SanadCLI.run(
            ["bench", "-m", TestPaths.smolLM2, "--backends", "llama", "-p", "4", "-n", "0", "-r", "1"],
            environment: missing)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("| model "))
        for column in ["size", "params", "backend", "threads", "test", "t/s"] { #expect(r.stdout.contains(column)) }
        #expect(
            r.stdout.contains(" unavailable |") && !r.stdout.contains("unavailable:"),
            "the row says unavailable, not the reason: \(r.stdout)")
        #expect(r.stderr.contains("llama: unavailable — "), "the reason goes to stderr")
        let defaults = try SanadCLI.run(
            ["bench", "-m", TestPaths.smolLM2, "-p", "4", "-n", "0", "-r", "1", "-t", "1", "--no-warmup"],
            environment: missing)
        #expect(defaults.status == 0, "\(defaults.stderr)")
        #expect(defaults.stdout.hasSuffix("\nbuild: sanad 0.1.0 (0)\n"), "llama-bench's footer: \(defaults.stdout)")
        let engines = defaults.stdout.split(separator: "\n").filter { $0.hasPrefix("|") }.dropFirst(2).map {
            $0.split(separator: "|")[3].trimmingCharacters(in: .whitespaces)
        }
        #expect(engines.contains("pure-swift") && !engines.contains("llama"), "\(defaults.stdout)")
        #expect(defaults.stderr.contains("llama: unavailable") && defaults.stderr.contains("(left out)"))
        let bad = try SanadCLI.run(["bench", "-o", "xml"])
        #expect(bad.status == 64)
    }

    @Test("list-valued -t, -b and -ub run every combination in llama-bench's order, with n_batch/n_ubatch columns")
    func lists() throws {
        let r = try SanadCLI.run([
            "bench", "-m", TestPaths.smolLM2, "--backends", "pure-swift", "-p", "8", "-n", "0", "-r", "1",
            "-t", "1,2", "-b", "64,2048", "-ub", "4", "--no-warmup", "-o", "jsonl",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let rows = try r.stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(rows.map { $0["n_batch"] as? Int } == [64, 64, 2048, 2048])
        #expect(rows.map { $0["n_threads"] as? Int } == [1, 2, 1, 2])
        #expect(rows.allSatisfy { $0["n_ubatch"] as? Int == 4 })
        let markdown = try SanadCLI.run([
            "bench", "-m", TestPaths.smolLM2, "--backends", "pure-swift", "-p", "8", "-n", "0", "-r", "1", "-t", "1",
            "-ub", "4", "--no-warmup",
        ])
        #expect(markdown.stdout.contains("n_ubatch |") && !markdown.stdout.contains("n_batch |"), "\(markdown.stdout)")
    }

    @Test(
        "CSV, JSON and SQL carry llama-bench's own fields in its order and types (the installed llama-bench, live)",
        .enabled(
            if: LlamaTools.native.map { FileManager.default.isExecutableFile(atPath: $0.tool("llama-bench").path) }
                ?? false))
    func llamaBenchParity() throws {
        let llamaBench = try #require(LlamaTools.native).tool("llama-bench")
        let model = try #require(TestPaths.model(TestPaths.smolLM2))
        func llama(_ format: String) throws -> String {
            let out = try runChildProcess(
                llamaBench, ["-m", model.path, "-p", "4", "-n", "0", "-r", "1", "-t", "1", "-o", format])
            #expect(out.status == 0, "llama-bench -o \(format): \(String(decoding: out.stderr, as: UTF8.self))")
            return String(decoding: out.stdout, as: UTF8.self)
        }
        func sanad(_ format: String) throws -> String {
            let r = try SanadCLI.run([
                "bench", "-m", TestPaths.smolLM2, "--backends", "pure-swift", "-p", "4", "-n", "0", "-r", "1", "-t",
                "1",
                "--no-warmup", "-o", format,
            ])
            #expect(r.status == 0, "\(r.stderr)")
            return r.stdout
        }
        // CSV: llama-bench's header is the start of ours; every value quoted as llama-bench quotes it.
        let llamaHeader = try #require(try llama("csv").split(separator: "\n").first).split(separator: ",")
        let ours = try sanad("csv").split(separator: "\n")
        #expect(Array(ours[0].split(separator: ",").prefix(llamaHeader.count)) == llamaHeader)
        #expect(ours[1].hasPrefix("\"sanad 0.1.0\",\"0\","), "\(ours[1])")
        // JSON: the same keys in the same order, then Sanad's.
        func keys(_ json: String) -> [String] {
            json.split(separator: "\n").compactMap { line in
                let t = line.trimmingCharacters(in: .whitespaces)
                guard t.hasPrefix("\""), let end = t.dropFirst().firstIndex(of: "\"") else { return nil }
                return String(t[t.index(after: t.startIndex)..<end])
            }
        }
        let llamaKeys = keys(try llama("json")).filter { !$0.hasPrefix("samples_") }
        #expect(Array(keys(try sanad("json")).prefix(llamaKeys.count)) == llamaKeys)
        // SQL: llama-bench's columns and types first; the statements run in SQLite (Python's sqlite3).
        func columns(_ sql: String) -> [String] {
            sql.split(separator: "\n").filter { $0.hasPrefix("  ") }.map {
                $0.trimmingCharacters(in: .whitespaces)
                    .trimmingCharacters(in: CharacterSet(charactersIn: ","))
            }
        }
        let llamaColumns = columns(try llama("sql"))
        let sql = try sanad("sql")
        #expect(llamaColumns.count > 30 && Array(columns(sql).prefix(llamaColumns.count)) == llamaColumns)
        let python = URL(fileURLWithPath: "/usr/bin/python3")
        if FileManager.default.isExecutableFile(atPath: python.path) {
            let load = try runChildProcess(
                python,
                [
                    "-c",
                    "import sqlite3,sys; c=sqlite3.connect(':memory:'); c.executescript(sys.stdin.read()); "
                        + "print(c.execute('select n_prompt, sanad_backend from sanad_bench').fetchall())",
                ], stdin: Data(sql.utf8))
            #expect(String(decoding: load.stdout, as: UTF8.self) == "[(4, 'pure-swift')]\n")
        }
    }

    @Test("-o svg draws one bar per result, titled engine and test, and names the unavailable")
    func svg() throws {
        let r = try SanadCLI.run(
            [
                "bench", "-m", TestPaths.smolLM2, "--backends", "pure-swift,llama", "-p", "8", "-n", "2", "-r", "1",
                "-t", "1", "--no-warmup", "-o", "svg",
            ], environment: ["SANAD_LIBLLAMA": "/nonexistent/libllama.so"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\"") && r.stdout.hasSuffix("</svg>\n"))
        let titles = r.stdout.components(separatedBy: "<title>").dropFirst().map { $0.prefix { $0 != ":" } }
        #expect(titles == ["pure-swift pp8", "pure-swift tg2"], "\(titles)")
        #expect(r.stdout.contains("unavailable: llama pp8, llama tg2"), "\(r.stdout)")
    }
}
