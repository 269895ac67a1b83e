import CreditScoringPlugin
import Foundation
import SanadCore
import SanadTestSupport

/// Generated tampering of a signed record: a flipped byte, a changed field (re-canonicalised, old signature kept),
/// a record signed by an unregistered key, a public key swapped for another. Every case must be rejected by a
/// verifier that knows only the original key.
enum TamperCases {
    struct Outcome {
        var total = 0
        var accepted = 0
        var acceptedExamples: [String] = []
        var reasons: [String: Int] = [:]
    }

    static func run(_ original: [UInt8], count: Int, lib: LibCrypto, seed: UInt64) throws -> Outcome {
        guard let publicKey = try JSONValue.parse(Data(original))["device"]?["publicKey"]?.stringValue else {
            return Outcome()
        }
        let registered: Set<String> = [publicKey]
        var outcome = Outcome()
        for (i, tampered) in try cases(original, count: count, lib: lib, seed: seed).enumerated() {
            outcome.total += 1
            do {
                _ = try RecordVerifier.verify(tampered, lib: lib, registeredKeys: registered)
                outcome.accepted += 1
                if outcome.acceptedExamples.count < 3 { outcome.acceptedExamples.append("case \(i) kind \(i % 4)") }
            } catch let rejection as RecordRejection {
                outcome.reasons[rejection.reason, default: 0] += 1
            }
        }
        return outcome
    }

    /// `count` tampered copies of `original`, the four kinds in turn.
    static func cases(_ original: [UInt8], count: Int, lib: LibCrypto, seed: UInt64) throws -> [[UInt8]] {
        let value = try JSONValue.parse(Data(original))
        guard case .object(let record) = value else { return [] }
        let stranger = try DeviceKey.loadOrCreate(directory: try CreditFixtures.temporaryDirectory(), lib: lib)
        var unsigned = record
        unsigned["signature"] = nil
        unsigned["device"] = nil
        var out: [[UInt8]] = []
        var rng = SeededGenerator(seed: seed)
        for i in 0..<count {
            let tampered: [UInt8]
            let kind = i % 4
            switch kind {
            case 0:
                var bytes = original
                let at = rng.int(0...(bytes.count - 1))
                bytes[at] ^= UInt8(rng.int(1...255))
                tampered = bytes
            case 1:
                tampered = try CanonicalJSON.bytes(mutateLeaf(value, rng: &rng))
            case 2:
                var body = unsigned
                body["recordId"] = .string("r-\(i)")
                tampered = try CreditRecord.sign(body, key: stranger, lib: lib)
            default:
                var swapped = record
                swapped["device"] = .object([
                    "keyId": .string(stranger.keyID), "publicKey": .string(Hex.encode(stranger.publicKey)),
                ])
                tampered = try CanonicalJSON.bytes(.object(swapped))
            }
            out.append(tampered)
        }
        return out
    }

    /// `value` with one leaf (anywhere in the tree) changed.
    static func mutateLeaf(_ value: JSONValue, rng: inout SeededGenerator) -> JSONValue {
        switch value {
        case .object(var o) where !o.isEmpty:
            let key = rng.pick(o.keys.sorted())
            o[key] = mutateLeaf(o[key] ?? .null, rng: &rng)
            return .object(o)
        case .array(var a) where !a.isEmpty:
            let i = rng.int(0...(a.count - 1))
            a[i] = mutateLeaf(a[i], rng: &rng)
            return .array(a)
        case .array: return .array([.null])
        case .object: return .object(["x": .null])
        case .string(let s): return .string(s.isEmpty ? "x" : String(s.dropLast()) + (s.last == "0" ? "1" : "0"))
        case .number(let n): return .number(n + 1)
        case .bool(let b): return .bool(!b)
        case .null: return .number(0)
        }
    }
}
