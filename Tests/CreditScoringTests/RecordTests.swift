import CreditScoringPlugin
import Foundation
import SanadCore
import SanadTestSupport
import Testing

/// A signed record of the fixture conversation, with a fresh device key.
struct SignedFixture {
    let lib: LibCrypto
    let key: DeviceKey
    let bytes: [UInt8]

    init(recordID: String = "r-fixture") throws {
        lib = try LibCrypto.shared()
        key = try DeviceKey.loadOrCreate(directory: try CreditFixtures.temporaryDirectory(), lib: lib)
        let url = try CreditFixtures.file(CreditFixtures.plain)
        let digest = try SHA256Digest(lib)
        let result = try CreditAnalysis.run(path: url.path, settings: AnalysisSettings(), digest: digest)
        let body = try CreditRecord.body(
            result, inputSHA256: try digest.hex(), model: nil, createdAt: Date(timeIntervalSince1970: 1_732_000_000),
            recordID: recordID, lib: lib)
        bytes = try CreditRecord.sign(body, key: key, lib: lib)
    }
}

@Suite("credit record")
struct RecordTests {
    @Test func canonicalJSONFollowsRFC8785() throws {
        // RFC 8785 §3.2.3 sorting example (UTF-16 order) and §3.2.2 number/string examples.
        let sorted = try CanonicalJSON.string(
            .object([
                "\u{20ac}": .string("Euro Sign"), "\r": .string("Carriage Return"), "1": .string("One"),
                "\u{1f600}": .string("Emoji: Grinning Face"), "\u{80}": .string("Control"),
                "\u{fb33}": .string("Hebrew Letter Dalet With Dagesh"),
            ]))
        #expect(
            sorted
                == "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u{80}\":\"Control\",\"\u{20ac}\":\"Euro Sign\",\"\u{1f600}\":\"Emoji: Grinning Face\",\"\u{fb33}\":\"Hebrew Letter Dalet With Dagesh\"}"
        )
        let numbers: [(Double, String)] = [
            (333_333_333.333_333_3, "333333333.3333333"), (1e30, "1e+30"), (4.5, "4.5"), (2e-3, "0.002"),
            (1e-27, "1e-27"), (0.000001, "0.000001"), (1e-7, "1e-7"), (1e21, "1e+21"), (1e20, "100000000000000000000"),
            (-0.0, "0"), (9_007_199_254_740_992, "9007199254740992"), (Double.leastNonzeroMagnitude, "5e-324"),
            (0.1, "0.1"),
            (123.456, "123.456"), (-1.5e-9, "-1.5e-9"),
        ]
        for (value, text) in numbers { #expect(try CanonicalJSON.number(value) == text, "\(value)") }
        #expect(
            try CanonicalJSON.string(.string("\u{0}\u{1f}\"\\/\n\u{7f}é")) == "\"\\u0000\\u001f\\\"\\\\/\\n\u{7f}é\"")
        #expect(throws: SigningError.self) { try CanonicalJSON.number(.infinity) }
    }

    @Test func signedRecordVerifies() throws {
        let f = try SignedFixture()
        let verified = try RecordVerifier.verify(f.bytes, lib: f.lib)
        #expect(verified.keyID == f.key.keyID && verified.recordID == "r-fixture")
        #expect(verified.digest == (try SHA256Digest.hex(f.bytes, lib: f.lib)))
        let record = try JSONValue.parse(Data(f.bytes))
        #expect(record["method"]?.stringValue == "deterministic-features-v1")
        #expect(record["input"]?["sha256"]?.stringValue?.count == 64)
        #expect(record["model"] == .null)
        // The analyzer is signed with the input: its formulas and the lexicon's digest, which any word changes.
        let lexicon = try Lexicon.digest(lib: f.lib)
        #expect(record["analyzer"]?["formulas"]?.stringValue == "deterministic-features-v1")
        #expect(record["analyzer"]?["lexiconSHA256"]?.stringValue == lexicon)
        var words = Lexicon.words
        words[.kinship, default: []].append("cousinz")
        #expect(try Lexicon.digest(words, lib: f.lib) != lexicon)
        // Without its analyzer a version 2 record is malformed, even re-signed.
        guard case .object(var body) = record else { return }
        body["analyzer"] = nil
        body["signature"] = nil
        body["device"] = nil
        let resigned = try CreditRecord.sign(body, key: f.key, lib: f.lib)
        #expect { try RecordVerifier.verify(resigned, lib: f.lib) } throws: { "\($0)".contains("analyzer") }
        // The record holds no message text.
        let text = String(decoding: f.bytes, as: UTF8.self)
        for line in CreditFixtures.plain.split(separator: "\n") {
            let message = line.split(separator: "|").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            #expect(!text.contains(message), "\(message)")
        }
    }

    @Test func deviceKeyIsOwnerOnlyAndReused() throws {
        let lib = try LibCrypto.shared()
        let dir = try CreditFixtures.temporaryDirectory().appendingPathComponent("keys")
        let a = try DeviceKey.loadOrCreate(directory: dir, lib: lib)
        let b = try DeviceKey.loadOrCreate(directory: dir, lib: lib)
        #expect(a.publicKey == b.publicKey && a.keyID.count == 16)
        let mode = try FileManager.default.attributesOfItem(atPath: a.file.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: a.file.path)
        #expect(throws: SigningError.self) { try DeviceKey.loadOrCreate(directory: dir, lib: lib) }
    }

    /// Tampering: a bounded sample here; `CREDIT_TAMPER_CASES=2000 swift test -c release --filter tamperedRecords` runs more.
    @Test func tamperedRecordsAreRejected() throws {
        let f = try SignedFixture()
        let cases = Int(ProcessInfo.processInfo.environment["CREDIT_TAMPER_CASES"] ?? "") ?? 200
        let outcome = try TamperCases.run(f.bytes, count: cases, lib: f.lib, seed: 23)
        #expect(outcome.accepted == 0, "accepted tampered: \(outcome.acceptedExamples)")
        #expect(outcome.total == cases)
        #expect((try? RecordVerifier.verify(f.bytes, lib: f.lib)) != nil)
    }
}
