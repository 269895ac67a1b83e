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
        #expect(lines.count == 2 && lines[1][column] == "16", "\(csv.stdout)")
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
        let engines = defaults.stdout.split(separator: "\n").dropFirst(2).map {
            $0.split(separator: "|")[3].trimmingCharacters(in: .whitespaces)
        }
        #expect(engines.contains("pure-swift") && !engines.contains("llama"), "\(defaults.stdout)")
        #expect(defaults.stderr.contains("llama: unavailable") && defaults.stderr.contains("(left out)"))
        let bad = try SanadCLI.run(["bench", "-o", "xml"])
        #expect(bad.status == 64)
    }
}
