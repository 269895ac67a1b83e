import Foundation
import SanadCore
import SanadTestSupport
import Testing

/// `sanad embed` and `sanad index` end to end with the tier's embedding model (pure-Swift all-MiniLM-L6-v2).
@Suite(
    "sanad embed and sanad index",
    .enabled(if: SanadCLI.executable != nil && TestPaths.model("all-MiniLM-L6-v2") != nil))
struct EmbedCLITests {
    func vectors(_ stdout: String) throws -> [[Double]] {
        try stdout.split(separator: "\n").map { line in
            try #require(try JSONValue.parse(String(line)).arrayValue).map { try #require($0.doubleValue) }
        }
    }

    func cosine(_ a: [Double], _ b: [Double]) -> Double { zip(a, b).map(*).reduce(0, +) }

    @Test("one unit vector of 384 per text, in order; a paraphrase is nearer than an unrelated text")
    func embedTexts() throws {
        let r = try SanadCLI.run([
            "embed", "How do I renew my passport?", "Steps to renew a passport", "The cat sleeps on the sofa",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let v = try vectors(r.stdout)
        #expect(v.count == 3 && v.allSatisfy { $0.count == 384 })
        for x in v { #expect(abs(cosine(x, x) - 1) < 1e-4) }
        #expect(cosine(v[0], v[1]) > cosine(v[0], v[2]) + 0.2, "\(cosine(v[0], v[1])) vs \(cosine(v[0], v[2]))")
    }

    @Test("a text past 256 tokens is embedded from its start, and standard error says so; no text is a usage error")
    func truncationAndUsage() throws {
        let long = Array(repeating: "renewal", count: 400).joined(separator: " ")
        let r = try SanadCLI.run(["embed", "-f", "-"], stdin: "short line\n\(long)\n")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try vectors(r.stdout).count == 2)
        #expect(r.stderr.contains("text 2") && r.stderr.contains("256 tokens"), "\(r.stderr)")
        let empty = try SanadCLI.run(["embed"])
        #expect(empty.status == 64 && empty.stderr.contains("missing the texts"), "\(empty.stderr)")
    }

    @Test("a progress line on a terminal (a pseudo-terminal by script(1)); none in a pipe unless --progress")
    func progress() throws {
        let dir = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("lines.txt")
        try (1...40).map { "line number \($0) about renewing a document" }.joined(separator: "\n")
            .write(to: file, atomically: true, encoding: .utf8)
        let now = ["SANAD_PROGRESS_DELAY": "0"]
        let piped = try SanadCLI.run(["embed", "-f", file.path], environment: now)
        #expect(piped.status == 0 && !piped.stderr.contains("embedding"), "\(piped.stderr)")
        let asked = try SanadCLI.run(["embed", "-f", file.path, "--progress"], environment: now)
        #expect(asked.status == 0 && asked.stderr.contains("embedding  "), "\(asked.stderr)")
        #expect(asked.stdout == piped.stdout, "progress must not change the vectors")
        let script = URL(fileURLWithPath: "/usr/bin/script")
        guard FileManager.default.isExecutableFile(atPath: script.path), let sanad = SanadCLI.executable else { return }
        let tty = try runChildProcess(
            script, ["-qec", "'\(sanad.path)' embed -f '\(file.path)' >/dev/null", "/dev/null"],
            environment: ProcessInfo.processInfo.environment.merging(now) { $1 }, directory: TestPaths.packageRoot)
        let shown = String(decoding: tty.stdout, as: UTF8.self)
        #expect(tty.status == 0, "\(shown)")
        #expect(shown.contains("\rembedding  ") && shown.contains("texts/s") && shown.contains("\u{1B}[K"), "\(shown)")
    }

    @Test("index add, query (text and JSON), remove and list; a changed file is refused naming it")
    func indexRoundTrip() throws {
        let dir = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let index = dir.appendingPathComponent("services.idx").path
        let corpus = [
            "Renew a passport: fee 300 SAR, needs a recent photo",
            "Renew a driving licence: a medical check is required",
            "Issue a national ID card for a child",
            "Pay traffic violations online",
        ]
        let add = try SanadCLI.run(
            ["index", "add", "--index", index, "--meta", "source=test", "-f", "-"],
            stdin: corpus.joined(separator: "\n"))
        #expect(add.status == 0 && add.stderr.contains("4 entries"), "\(add.stderr)")

        let query = try SanadCLI.run(["index", "query", "--index", index, "--json", "-k", "2", "my passport expires"])
        #expect(query.status == 0, "\(query.stderr)")
        let hits = try query.stdout.split(separator: "\n").map { try JSONValue.parse(String($0)) }
        #expect(hits.count == 2)
        #expect(hits.first?["id"]?.stringValue == corpus[0], "\(query.stdout)")
        #expect(hits.first?["metadata"]?["source"]?.stringValue == "test")
        let scores = hits.compactMap { $0["score"]?.doubleValue }
        #expect(scores.count == 2 && scores[0] >= scores[1])

        let remove = try SanadCLI.run(["index", "remove", "--index", index, corpus[0], "no-such-id"])
        #expect(remove.status == 0 && remove.stderr.contains("no entry 'no-such-id'"), "\(remove.stderr)")
        let list = try SanadCLI.run(["index", "list", "--index", index])
        #expect(list.stdout.split(separator: "\n").count == 3 && !list.stdout.contains(corpus[0]), "\(list.stdout)")

        // A byte after the last segment is what a killed append leaves: the index still reads.
        let handle = try #require(FileHandle(forWritingAtPath: index))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data([0x41]))
        try handle.close()
        let kept = try SanadCLI.run(["index", "list", "--index", index])
        #expect(kept.status == 0 && kept.stdout.split(separator: "\n").count == 3, "\(kept.stderr)")
        // A changed byte inside is damage: refused, naming the file.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: index))
        bytes[bytes.count / 2] ^= 0x01
        try bytes.write(to: URL(fileURLWithPath: index))
        let refused = try SanadCLI.run(["index", "list", "--index", index])
        #expect(refused.status == 1 && refused.stderr.contains(index), "\(refused.stderr)")
    }

    @Test(
        "--jsonl imports ids, texts and metadata; queries return them; the header names the model; bad lines are named")
    func jsonlImport() throws {
        let dir = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let index = dir.appendingPathComponent("docs.idx").path
        let lines = [
            #"{"id": "passport-fee", "text": "Passport renewal fee: 300 SAR for five years", "meta": {"page": 4, "lang": "en"}}"#,
            #"{"id": "licence", "text": "A driving licence renewal needs a medical check"}"#,
            "",
            #"{"text": "Traffic violations can be paid online"}"#,
        ]
        let add = try SanadCLI.run(
            ["index", "add", "--index", index, "--jsonl", "-", "--meta", "source=handbook"],
            stdin: lines.joined(separator: "\n"))
        #expect(add.status == 0 && add.stderr.contains("3 entries (all-MiniLM-L6-v2 (weights sha256 "), "\(add.stderr)")
        let query = try SanadCLI.run([
            "index", "query", "--index", index, "--json", "-k", "1", "how much is a passport",
        ])
        let hit = try JSONValue.parse(String(try #require(query.stdout.split(separator: "\n").first)))
        #expect(hit["id"]?.stringValue == "passport-fee", "\(query.stdout)")
        #expect(hit["metadata"]?["page"]?.stringValue == "4" && hit["metadata"]?["source"]?.stringValue == "handbook")
        let list = try SanadCLI.run(["index", "list", "--index", index])
        #expect(list.stdout.contains("Traffic violations can be paid online"), "the text is the id when none is given")
        #expect(list.stderr.contains("3 entries of all-MiniLM-L6-v2"), "\(list.stderr)")
        let bad = try SanadCLI.run(
            ["index", "add", "--index", index, "--jsonl", "-"], stdin: #"{"text": "ok"}"# + "\n" + #"{"txt": "typo"}"#)
        #expect(bad.status == 64 && bad.stderr.contains("standard input line 2: unknown key 'txt'"), "\(bad.stderr)")
        #expect(try SanadCLI.run(["index", "list", "--index", index]).stdout.split(separator: "\n").count == 3)
    }
}
