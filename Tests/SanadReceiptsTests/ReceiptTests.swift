import Foundation
import GGUF
import SanadCore
import SanadReceipts
import SanadSigning
import SanadStructured
import SanadTestSupport
import Testing

/// Receipts in process: the signed form verifies, every changed byte is refused, included text must match its
/// digests, trusted keys are enforced, replays compare token by token, the tokenizer digest is stable.
@Suite("generation receipts (in process)", .enabled(if: (try? LibCrypto.shared()) != nil))
struct ReceiptTests {
    let lib: LibCrypto
    let key: DeviceKey

    init() throws {
        lib = try LibCrypto.shared()
        key = try DeviceKey.loadOrCreate(directory: try TestPaths.temporaryDirectory(), lib: lib)
    }

    static func facts(includeText: Bool = true) -> GenerationFacts {
        let parameters = GenerationParameters(
            maxTokens: 16, sampling: SamplingParameters(temperature: 0.8, seed: UInt64.max), stopStrings: ["\n\n"],
            truncatePrompt: false, constraint: try? SchemaConstraint(schema: .object(["type": .string("object")])))
        var generation = GenerationRecord(
            prompt: "Hello \"world\" é", promptTokens: [1, 2, 3], parameters: parameters, chatTemplate: "model")
        generation.outputTokens = [4, 5]
        generation.outputText = " there"
        generation.stopReason = .maxTokens
        generation.stats = GenerationStats(
            promptTokens: 3, generatedTokens: 2, promptSeconds: 0.01, generationSeconds: 0.02)
        return GenerationFacts(
            sanadVersion: "0.1.0",
            model: ReceiptModel(
                file: "m.gguf", sha256: String(repeating: "a", count: 64), bytes: 1234, architecture: "llama",
                tokenizerSHA256: String(repeating: "b", count: 64), chatTemplateSHA256: nil),
            engine: ReceiptEngine(
                id: "pure-swift", build: "kernels portable", notReplayable: nil, threads: 2, batchSize: 512,
                contextLength: 2048),
            generation: generation, createdAt: Date(timeIntervalSince1970: 1_800_000_000), includeText: includeText)
    }

    @Test("a signed receipt verifies and states its parameters exactly (a 64-bit seed, float sampling values)")
    func roundTrip() throws {
        let bytes = try GenerationReceipt.sign(Self.facts(), nonce: [1, 2, 3, 4, 5, 6], key: key, lib: lib)
        let receipt = try ReceiptVerifier.verify(bytes + [10], lib: lib)
        #expect(receipt.signer.keyID == key.keyID && receipt.engineID == "pure-swift" && receipt.notReplayable == nil)
        #expect(receipt.promptTokens == [1, 2, 3] && receipt.outputTokens == [4, 5])
        let p = try receipt.parameters()
        #expect(p.sampling == SamplingParameters(temperature: 0.8, seed: UInt64.max))
        #expect(p.maxTokens == 16 && p.stops == ["\n\n"] && !p.truncate)
        #expect(receipt.schema == .object(["type": .string("object")]))
        #expect(try CanonicalJSON.bytes(.object(receipt.document)) == bytes)
        let private_ = try GenerationReceipt.sign(
            Self.facts(includeText: false), nonce: [1, 2, 3, 4, 5, 6], key: key, lib: lib)
        let hidden = try ReceiptVerifier.verify(private_, lib: lib)
        #expect(hidden.promptTokens == nil && hidden.schema == nil && hidden.document["prompt"]?["text"] == nil)
        #expect(!String(decoding: private_, as: UTF8.self).contains("Hello"))
    }

    @Test("every single changed byte of a receipt is refused")
    func everyByte() throws {
        let bytes = try GenerationReceipt.sign(Self.facts(), nonce: [1, 2, 3, 4, 5, 6], key: key, lib: lib) + [10]
        var accepted: [Int] = []
        for i in bytes.indices {
            var changed = bytes
            changed[i] ^= 0x01
            if (try? ReceiptVerifier.verify(changed, lib: lib)) != nil { accepted.append(i) }
        }
        #expect(accepted.isEmpty, "accepted with a changed byte at \(accepted)")
        #expect(bytes.count > 1000)
    }

    @Test("included text that does not match its digest, an unknown key, a swapped key are refused")
    func refusals() throws {
        var document = try ReceiptVerifier.verify(
            try GenerationReceipt.sign(Self.facts(), nonce: [1, 2, 3, 4, 5, 6], key: key, lib: lib), lib: lib
        ).document
        document["signature"] = nil
        document["device"] = nil
        var output = try #require(document["output"]?.objectValue)
        output["text"] = .string(" elsewhere")
        document["output"] = .object(output)
        let resigned = try SignedDocument.sign(document, key: key, lib: lib)
        #expect(
            throws: SignatureProblem(
                reason: "inconsistent", detail: "output.text does not match its digest", keyID: key.keyID)
        ) {
            try ReceiptVerifier.verify(resigned, lib: lib)
        }
        let good = try GenerationReceipt.sign(Self.facts(), nonce: [1, 2, 3, 4, 5, 6], key: key, lib: lib)
        let stranger = try DeviceKey.loadOrCreate(directory: try TestPaths.temporaryDirectory(), lib: lib)
        let trusted = try ReceiptVerifier.trustedKeys("# mine\n\(Hex.encode(stranger.publicKey)) other\n\n")
        #expect(throws: SignatureProblem.self) { try ReceiptVerifier.verify(good, lib: lib, trustedKeys: trusted) }
        #expect(try ReceiptVerifier.verify(good, lib: lib, trustedKeys: [Hex.encode(key.publicKey)]).digest.count == 64)
        // The signature made by one key, presented with another key's identity.
        let text = String(decoding: good, as: UTF8.self)
            .replacingOccurrences(of: Hex.encode(key.publicKey), with: Hex.encode(stranger.publicKey))
            .replacingOccurrences(of: key.keyID, with: stranger.keyID)
        #expect(throws: SignatureProblem.self) { try ReceiptVerifier.verify(Array(text.utf8), lib: lib) }
        #expect(throws: SignatureProblem.self) { try ReceiptVerifier.trustedKeys("not-a-key\n") }
    }

    @Test("a replay is identical, or differs at the first differing token (or where one side ended)")
    func replayComparison() {
        #expect(ReplayOutcome.compare(expected: [1, 2, 3], got: [1, 2, 3]) == .identical(tokens: 3))
        #expect(ReplayOutcome.compare(expected: [1, 2, 3], got: [1, 9, 3]) == .differs(index: 1, expected: 2, got: 9))
        #expect(ReplayOutcome.compare(expected: [1, 2], got: [1, 2, 3]) == .differs(index: 2, expected: nil, got: 3))
        #expect(ReplayOutcome.compare(expected: [1, 2], got: [1]) == .differs(index: 1, expected: 2, got: nil))
    }

    @Test(
        "the tokenizer digest is stable and leaves out the chat template; what creating a receipt costs is printed",
        .enabled(if: TestPaths.model(TestPaths.smolLM2) != nil))
    func tokenizerDigestAndCost() throws {
        let file = try GGUFFile(path: try #require(TestPaths.model(TestPaths.smolLM2)).path)
        let a = try TokenizerDigest.sha256(file, lib: lib)
        #expect(a == (try TokenizerDigest.sha256(file, lib: lib)) && a.count == 64)
        #expect(try TokenizerDigest.chatTemplateSHA256(file, lib: lib) != nil)
        // The receipt itself (digests of ids and text, canonical form, Ed25519) beyond hashing the model, measured
        // and printed for the README (no timing threshold: the machines are shared); it must make a valid receipt.
        var facts = Self.facts()
        facts.generation.outputTokens = Array(0..<Int32(256))
        facts.generation.outputText = String(repeating: "word ", count: 256)
        let runs = 500
        for includeText in [true, false] {
            facts.includeText = includeText
            var times: [Double] = []
            for _ in 0..<runs {
                let start = DispatchTime.now()
                let bytes = try GenerationReceipt.sign(
                    facts, nonce: try GenerationReceipt.newNonce(lib: lib), key: key, lib: lib)
                times.append(Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e6)
                if times.count == 1 { _ = try ReceiptVerifier.verify(bytes, lib: lib) }
            }
            let sorted = times.sorted()
            print(
                "receipt creation (256 output tokens, text \(includeText ? "included" : "left out")): median of "
                    + "\(runs) \(String(format: "%.3f", sorted[runs / 2])) ms, best \(String(format: "%.3f", sorted[0])) "
                    + "ms, 90th percentile \(String(format: "%.3f", sorted[runs * 9 / 10])) ms")
            #expect(sorted.count == runs && sorted[0] > 0)
        }
    }

    @Test(
        "a generation's events make its record; the issuer signs it as a receipt that verifies, held as an object too")
    func issuerAndRecord() throws {
        let parameters = GenerationParameters(
            maxTokens: 8, sampling: SamplingParameters(temperature: 0), stopStrings: [], truncatePrompt: false,
            constraint: try SchemaConstraint(schema: .object(["type": .string("object")])))
        var record = GenerationRecord(
            prompt: "Hi", promptTokens: [1, 2], parameters: parameters, chatTemplate: "model")
        #expect(!record.finished && record.constraint == .jsonSchema(.object(["type": .string("object")])))
        record.record(.token(id: 7, text: "{"))
        record.record(.token(id: 8, text: "}"))
        record.record(.finished(.endOfGeneration, GenerationStats(promptTokens: 2, generatedTokens: 2)))
        #expect(record.finished && record.outputTokens == [7, 8] && record.outputText == "{}")
        let facts = Self.facts()
        let issuer = ReceiptIssuer(
            model: facts.model, engine: facts.engine, sanadVersion: facts.sanadVersion, key: key, lib: lib)
        let object = try issuer.signedObject(record, includeText: true)
        let receipt = try ReceiptVerifier.verify(object: object, lib: lib)
        #expect(receipt.outputTokens == [7, 8] && receipt.constraintKind == "json-schema")
        // In a server response and in a transcript.
        let response = JSONValue.object(["id": .string("chatcmpl-1"), "receipt": object])
        guard case .embedded(let found) = ReceiptContainer.of(Array(response.jsonString.utf8)) else {
            Issue.record("a response's receipt is not found")
            return
        }
        #expect(found.map(\.label) == ["response"] && found[0].receipt == object)
        let transcript = JSONValue.array([
            .object(["id": .string("a"), "content": .string("Hi")]),
            .object(["id": .string("b"), "content": .string("{}"), "receipt": object]),
        ])
        #expect(
            ReceiptContainer.of(Array(transcript.jsonString.utf8))
                == .embedded([EmbeddedReceipt(label: "message b", receipt: object, content: "{}")]))
        #expect(
            ReceiptContainer.of(try GenerationReceipt.sign(facts, nonce: [1, 2, 3, 4, 5, 6], key: key, lib: lib))
                == .file)
    }

    @Test("rotating the device key keeps the old public key as a retired line that a trusted list takes")
    func rotation() throws {
        let dir = try TestPaths.temporaryDirectory()
        let first = try DeviceKey.loadOrCreate(directory: dir, lib: lib)
        let (retired, current) = try DeviceKey.rotate(directory: dir, retiredAt: "2026-11-27T00:00:00Z", lib: lib)
        #expect(retired.keyID == first.keyID && current.keyID != first.keyID)
        #expect(try DeviceKey.loadOrCreate(directory: dir, lib: lib).keyID == current.keyID)
        let lines = DeviceKey.retiredKeys(directory: dir)
        #expect(lines == ["\(Hex.encode(first.publicKey)) \(first.keyID) retired 2026-11-27T00:00:00Z"])
        let trusted = try ReceiptVerifier.trustedKeys(lines.joined(separator: "\n"))
        let old = try GenerationReceipt.sign(Self.facts(), nonce: [1, 2, 3, 4, 5, 6], key: first, lib: lib)
        #expect(try ReceiptVerifier.verify(old, lib: lib, trustedKeys: trusted).signer.keyID == first.keyID)
        let new = try GenerationReceipt.sign(Self.facts(), nonce: [1, 2, 3, 4, 5, 6], key: current, lib: lib)
        #expect(throws: SignatureProblem.self) { try ReceiptVerifier.verify(new, lib: lib, trustedKeys: trusted) }
        #expect(try ReceiptVerifier.verify(new, lib: lib, trustedKeys: [current.keyID]).signer.keyID == current.keyID)
        var info = stat()
        #expect(stat(dir.appendingPathComponent(DeviceKey.fileName).path, &info) == 0 && info.st_mode & 0o077 == 0)
    }
}
