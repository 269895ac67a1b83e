import Foundation
import GGUF
import SanadCore
import SanadTestSupport
import Testing

/// `sanad generate --receipt` and `sanad receipt verify --replay` on SmolLM2 (-n 16): a receipt made with the
/// portable kernels replays identically with every kernel build this CPU runs (greedy, seeded sampling, a JSON
/// schema); a model with one tensor changed is not found by digest and, named with -m, differs at a token.
@Suite(
    "generation receipts", .serialized,
    .enabled(if: SanadCLI.executable != nil && TestPaths.model(TestPaths.smolLM2) != nil))
struct ReceiptCLITests {
    static let prompt = "The three primary colors are"

    /// The kernel builds this CPU runs, from `sanad backends` ("this CPU runs avx512vnni, avx512, avx2, portable").
    static func runnableKernels() throws -> [String] {
        let out = try SanadCLI.run(["backends"]).stdout
        guard let range = out.range(of: "this CPU runs ") else { return ["portable"] }
        let rest = out[range.upperBound...].prefix { $0 != ";" && $0 != ")" }
        return rest.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// Writes a receipt of `flags` made with the portable kernels; returns its path.
    static func makeReceipt(_ flags: [String], in dir: URL, includeText: Bool = true) throws -> String {
        let receipt = dir.appendingPathComponent("receipt-\(UUID().uuidString).json").path
        let r = try SanadCLI.run(
            ["generate", "-m", TestPaths.smolLM2, "-n", "16", "--receipt", receipt] + flags
                + (includeText ? ["--receipt-include-text"] : []) + [prompt],
            environment: ["SANAD_KERNELS": "portable", "SANAD_DATA": dir.path])
        try #require(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("receipt: \(receipt), signed by device key"))
        return receipt
    }

    static let cases: [(String, [String])] = [
        ("greedy", ["--temp", "0"]),
        ("seeded sampling", ["--temp", "0.9", "--seed", "7"]),
        ("greedy with a JSON schema", ["--temp", "0", "--json-schema", "SCHEMA"]),
    ]

    @Test("a portable-kernel receipt replays identical with every kernel build", arguments: 0..<3)
    func replaysIdentical(caseIndex: Int) throws {
        let dir = try TestPaths.temporaryDirectory()
        let schema = dir.appendingPathComponent("schema.json")
        try Data(#"{"type":"object","properties":{"color":{"enum":["red","green","blue"]}},"required":["color"]}"#.utf8)
            .write(to: schema)
        let flags = Self.cases[caseIndex].1.map { $0 == "SCHEMA" ? schema.path : $0 }
        let receipt = try Self.makeReceipt(flags, in: dir)
        let kernels = try Self.runnableKernels()
        #expect(kernels.contains("portable"))
        for build in kernels {
            let r = try SanadCLI.run(
                ["receipt", "verify", receipt, "--replay"],
                environment: ["SANAD_KERNELS": build, "SANAD_DATA": dir.path])
            #expect(r.status == 0, "\(Self.cases[caseIndex].0), \(build): \(r.stdout) \(r.stderr)")
            #expect(r.stdout.contains("replay: identical: "), "\(r.stdout)")
            #expect(r.stdout.contains("kernels \(build)"), "\(r.stdout)")
        }
    }

    @Test("a changed byte fails verification; a trusted-keys list is enforced; no text means no replay")
    func tamperingAndTrust() throws {
        let dir = try TestPaths.temporaryDirectory()
        let receipt = try Self.makeReceipt(["--temp", "0"], in: dir, includeText: false)
        let env = ["SANAD_DATA": dir.path]
        let ok = try SanadCLI.run(["receipt", "verify", receipt], environment: env)
        #expect(ok.status == 0 && ok.stdout.hasPrefix("valid: receipt "), "\(ok.stderr)")
        let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: receipt)))
        // A few positions through the file (the in-process tests change every byte).
        for position in stride(from: 0, to: bytes.count, by: max(1, bytes.count / 6)) {
            var changed = bytes
            changed[position] ^= 0x01
            let r = try SanadCLI.run(
                ["receipt", "verify", "-"], stdin: String(decoding: changed, as: UTF8.self), environment: env)
            #expect(r.status == 1 && r.stderr.contains("invalid: receipt rejected"), "byte \(position): \(r.stdout)")
        }
        let exported = try SanadCLI.run(["keys", "export-public"], environment: env)
        #expect(exported.status == 0)
        let trusted = dir.appendingPathComponent("trusted.txt")
        try Data(exported.stdout.utf8).write(to: trusted)
        let good = try SanadCLI.run(["receipt", "verify", receipt, "--trusted-keys", trusted.path], environment: env)
        #expect(good.status == 0 && good.stdout.contains("(trusted)"), "\(good.stderr)")
        let stranger = dir.appendingPathComponent("stranger.txt")
        try Data((String(repeating: "ab", count: 32) + "\n").utf8).write(to: stranger)
        let bad = try SanadCLI.run(["receipt", "verify", receipt, "--trusted-keys", stranger.path], environment: env)
        #expect(bad.status == 1 && bad.stderr.contains("untrusted-key"), "\(bad.stderr)")
        let replay = try SanadCLI.run(["receipt", "verify", receipt, "--replay"], environment: env)
        #expect(replay.status == 1 && replay.stderr.contains("--receipt-include-text"), "\(replay.stderr)")
        let usage = try SanadCLI.run(["generate", "--receipt-include-text", "x"], environment: env)
        #expect(usage.status == 64 && usage.stderr.contains("needs --receipt FILE"), "\(usage.stderr)")
    }

    @Test("one device key signs receipts and credit records; keys show names it")
    func oneDeviceKey() throws {
        let dir = try TestPaths.temporaryDirectory()
        let env = ["SANAD_DATA": dir.path]
        let receipt = try Self.makeReceipt(["--temp", "0"], in: dir, includeText: false)
        let receiptKey = try JSONValue.parse(try String(contentsOfFile: receipt, encoding: .utf8))["device"]?["keyId"]
        let credit = try SanadCLI.run(
            ["credit", "analyze", "--consent", "-", "--json"], stdin: "2024-03-01T10:15 | Mom | Good morning\n",
            environment: env)
        #expect(credit.status == 0, "\(credit.stderr)")
        let recordKey = try JSONValue.parse(credit.stdout)["record"]?["device"]?["keyId"]
        let shown = try JSONValue.parse(try SanadCLI.run(["keys", "show", "--json"], environment: env).stdout)
        #expect(receiptKey != nil && receiptKey == recordKey && shown["keyId"] == receiptKey)
        #expect(shown["publicKey"]?.stringValue?.count == 64)
    }

    @Test("a model with one tensor changed: not found by digest, and with -m the first differing token")
    func changedModel() throws {
        let dir = try TestPaths.temporaryDirectory()
        let receipt = try Self.makeReceipt(["--temp", "0"], in: dir)
        let original = try #require(TestPaths.model(TestPaths.smolLM2))
        let gguf = try GGUFFile(path: original.path)
        let norm = try gguf.requireTensor("output_norm.weight")
        try #require(norm.type == .f32)
        // Negate the final norm's weights (the sign bit of each float): every logit changes sign.
        var data = try Data(contentsOf: original)
        for i in stride(from: norm.fileOffset + 3, to: norm.fileOffset + norm.byteCount, by: 4) { data[i] ^= 0x80 }
        let models = dir.appendingPathComponent("models")
        try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
        let changed = models.appendingPathComponent(TestPaths.smolLM2)
        try data.write(to: changed)
        let env = ["SANAD_DATA": dir.path]
        let missing = try SanadCLI.run(
            ["receipt", "verify", receipt, "--replay", "--models", models.path], environment: env)
        #expect(missing.status == 1 && missing.stderr.contains("model not found by digest"), "\(missing.stderr)")
        let differs = try SanadCLI.run(
            ["receipt", "verify", receipt, "--replay", "--models", models.path, "-m", changed.path], environment: env)
        #expect(differs.status == 2, "\(differs.stdout) \(differs.stderr)")
        #expect(differs.stdout.contains("replay: differs at token 0: expected "), "\(differs.stdout)")
        #expect(differs.stderr.contains("is not the receipt's model"))
    }

    @Test("a receipt made on a non-deterministic engine says it cannot be replayed exactly, and why")
    func nonDeterministicEngine() throws {
        // `blas         available    …`: the first available engine of the two, if any.
        let lines = try SanadCLI.run(["backends"]).stdout.split(separator: "\n")
        let available = lines.map { $0.split(separator: " ") }.filter { $0.count > 1 && $0[1] == "available" }
        guard let engine = ["blas", "llama"].first(where: { id in available.contains { $0[0] == id } }) else { return }
        let dir = try TestPaths.temporaryDirectory()
        let receipt = try Self.makeReceipt(["--temp", "0", "--backend", engine], in: dir)
        let r = try SanadCLI.run(["receipt", "verify", receipt, "--replay"], environment: ["SANAD_DATA": dir.path])
        #expect(r.status == 1 && r.stderr.contains("cannot replay this receipt exactly"), "\(r.stderr)")
        #expect(r.stdout.contains("on \(engine) "))
    }

    @Test("chat: /receipt signs the last model answer, says when a reply is no model answer; --receipts fills /save")
    func chatReceipts() throws {
        let dir = try TestPaths.temporaryDirectory()
        let receipt = dir.appendingPathComponent("answer.json").path
        let history = dir.appendingPathComponent("history.json").path
        // A grounded typed question (answered by the template at this tier, or by a checked draft), then a free model
        // answer after a tool call (greedy: the same call every run).
        let input =
            "/receipt\nجوازي متى يخلص؟\n/receipt\n/tools on\nWhat are my alerts?\n/receipt \(receipt)\n"
            + "/save \(history)\n/quit\n"
        let env = ["SANAD_DATA": dir.path]
        let r = try SanadCLI.run(
            [
                "chat", "--tier", "4gb", "--now", "2026-11-22", "--backend", "pure-swift", "-n", "24", "-t", "1",
                "--receipts", "--receipt-include-text",
            ], stdin: input, environment: env)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("(no receipt: there is no answer yet to sign)"), "\(r.stdout)")
        #expect(
            r.stdout.contains("(no receipt: the last reply was not generated by the model")
                || r.stdout.contains("(no receipt: the last reply is the plugin's template sentence"), "\(r.stdout)")
        try #require(r.stdout.contains("receipt: \(receipt), signed by device key "), "\(r.stdout)")
        // The tools-mode prompt is long (some 1,900 tokens): replayed with this CPU's fastest kernels (the portable
        // ones' receipts replay on every build in `replaysIdentical`).
        let replay = try SanadCLI.run(["receipt", "verify", receipt, "--replay"], environment: env)
        #expect(
            replay.status == 0 && replay.stdout.contains("replay: identical: "), "\(replay.stdout) \(replay.stderr)")

        // The transcript keeps the receipt with the model's answer only; a changed answer no longer matches it.
        let saved = try JSONValue.parse(try String(contentsOfFile: history, encoding: .utf8))
        let entries = try #require(saved.arrayValue)
        #expect(entries.filter { $0["receipt"] != nil }.count == 1, "\(saved)")
        let transcript = try SanadCLI.run(["receipt", "verify", history], environment: env)
        #expect(transcript.status == 0 && transcript.stdout.hasPrefix("valid: message "), "\(transcript.stderr)")
        // Laid out again (a receipt held as an object is checked in its canonical form), then with the answer edited.
        var list = entries
        let index = try #require(list.firstIndex { $0["receipt"] != nil })
        let relaid = try SanadCLI.run(
            ["receipt", "verify", "-"], stdin: JSONValue.array(list).jsonString, environment: env)
        #expect(relaid.status == 0, "\(relaid.stderr)")
        var message = try #require(list[index].objectValue)
        message["content"] = .string((message["content"]?.stringValue ?? "") + " (edited)")
        list[index] = .object(message)
        let tampered = try SanadCLI.run(
            ["receipt", "verify", "-"], stdin: JSONValue.array(list).prettyString, environment: env)
        #expect(tampered.status == 1 && tampered.stderr.contains("(inconsistent)"), "\(tampered.stderr)")
    }

    @Test("keys rotate: new receipts carry the new key (credit records too); old ones verify against its retired line")
    func rotation() throws {
        let dir = try TestPaths.temporaryDirectory()
        let env = ["SANAD_DATA": dir.path]
        let old = try Self.makeReceipt(["--temp", "0"], in: dir, includeText: false)
        let oldKey = try #require(
            try JSONValue.parse(try String(contentsOfFile: old, encoding: .utf8))["device"]?["keyId"]?.stringValue)
        let rotated = try SanadCLI.run(["keys", "rotate"], environment: env)
        #expect(rotated.status == 0 && rotated.stdout.contains("retired key: \(oldKey)"), "\(rotated.stderr)")
        let shown = try JSONValue.parse(try SanadCLI.run(["keys", "show", "--json"], environment: env).stdout)
        let newKey = try #require(shown["keyId"]?.stringValue)
        #expect(newKey != oldKey && shown["retired"]?.arrayValue?.count == 1)

        let new = try Self.makeReceipt(["--temp", "0"], in: dir, includeText: false)
        #expect(
            try JSONValue.parse(try String(contentsOfFile: new, encoding: .utf8))["device"]?["keyId"] == .string(newKey)
        )
        let credit = try SanadCLI.run(
            ["credit", "analyze", "-", "--json", "--consent"], stdin: "2024-03-01T10:15 | Mom | Good morning\n",
            environment: env)
        #expect(
            try JSONValue.parse(credit.stdout)["record"]?["device"]?["keyId"] == .string(newKey), "\(credit.stderr)")

        func trusting(_ text: String) throws -> String {
            let file = dir.appendingPathComponent("trusted-\(UUID().uuidString).txt")
            try Data(text.utf8).write(to: file)
            return file.path
        }
        let current = try trusting(try SanadCLI.run(["keys", "export-public"], environment: env).stdout)
        let all = try trusting(try SanadCLI.run(["keys", "export-public", "--with-retired"], environment: env).stdout)
        let refused = try SanadCLI.run(["receipt", "verify", old, "--trusted", current], environment: env)
        #expect(refused.status == 1 && refused.stderr.contains("untrusted-key"), "\(refused.stderr)")
        #expect(refused.stderr.contains("signed by device key \(oldKey)"), "\(refused.stderr)")
        for receipt in [old, new] {
            let r = try SanadCLI.run(["receipt", "verify", receipt, "--trusted", all], environment: env)
            #expect(r.status == 0 && r.stdout.contains("(trusted)"), "\(r.stderr)")
        }
        // A key id alone is a trusted key too.
        let byID = try SanadCLI.run(
            ["receipt", "verify", new, "--trusted", try trusting("# this device\n\(newKey)\n")], environment: env)
        #expect(byID.status == 0, "\(byID.stderr)")
    }
}
