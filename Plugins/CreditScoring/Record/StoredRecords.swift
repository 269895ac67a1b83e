import Foundation
import SanadCore
import SanadSigning

/// A record in the store as `history`, `status` and `send` show it: read, verified (canonical bytes, fields,
/// Ed25519 signature) and, when the server confirmed it, the confirmation checked to name this record and its
/// digest. Only a verified record's fields are ever shown or sent; anything else is listed as invalid with the
/// reason, never as stored.
public struct StoredRecord: Sendable {
    /// Where a record stands.
    public enum State: Sendable, Equatable, CustomStringConvertible {
        /// Verified and confirmed by the server under `id`.
        case stored(id: Int)
        /// Verified, waiting in the outbox.
        case outbox
        /// Verified, not sent.
        case local
        /// Refused on this device: `bad-signature`, `not-canonical`, `malformed`, `record-id-mismatch`,
        /// `confirmation-mismatch`, `unreadable`.
        case invalid(reason: String, detail: String)
        /// Not checked: the verifier (libcrypto) is missing.
        case unverified(reason: String)

        public var description: String {
            switch self {
            case .stored(let id): return "stored as id \(id)"
            case .outbox: return "outbox"
            case .local: return "local"
            case .invalid(let reason, _): return "invalid: \(reason)"
            case .unverified(let reason): return "unverified (\(reason))"
            }
        }
    }

    /// The file's name without `.json`.
    public var fileID: String
    public var file: URL
    public var state: State
    /// The verified record; nil unless `state` is stored, outbox or local.
    public var verified: VerifiedRecord?

    /// Every record file of `store`, checked with `lib` (nil: libcrypto is missing, `missing` says why), oldest
    /// first by each verified record's own `createdAt` (unverifiable ones by file name, first).
    public static func all(in store: RecordStore, lib: LibCrypto?, missing: String = "libcrypto is missing")
        -> [StoredRecord]
    {
        let records = store.files(in: store.records).map { file in
            check(file, store: store, lib: lib, missing: missing)
        }
        return records.sorted { a, b in
            switch (a.verified, b.verified) {
            case (let x?, let y?): return (x.createdAt, a.fileID) < (y.createdAt, b.fileID)
            case (nil, _?): return true
            case (_?, nil): return false
            case (nil, nil): return a.fileID < b.fileID
            }
        }
    }

    /// One record file checked.
    public static func check(_ file: URL, store: RecordStore, lib: LibCrypto?, missing: String) -> StoredRecord {
        let fileID = file.deletingPathExtension().lastPathComponent
        func record(_ state: State, _ verified: VerifiedRecord? = nil) -> StoredRecord {
            StoredRecord(fileID: fileID, file: file, state: state, verified: verified)
        }
        guard let lib else { return record(.unverified(reason: missing)) }
        guard let bytes = try? [UInt8](contentsOf: file) else {
            return record(.invalid(reason: "unreadable", detail: "\(file.path) cannot be read"))
        }
        let verified: VerifiedRecord
        do {
            verified = try RecordVerifier.verify(bytes, lib: lib)
        } catch let rejection as RecordRejection {
            return record(.invalid(reason: rejection.reason, detail: rejection.detail))
        } catch {
            return record(.invalid(reason: "unreadable", detail: "\(error)"))
        }
        guard verified.recordID == fileID else {
            return record(
                .invalid(
                    reason: "record-id-mismatch",
                    detail: "the file \(file.lastPathComponent) holds \(verified.recordID)"))
        }
        let confirmation = store.confirmations.appendingPathComponent("\(fileID).json")
        if let data = FileManager.default.contents(atPath: confirmation.path) {
            // The server's confirmation must name this record and the digest of these very bytes.
            guard let c = try? JSONValue.parse(data), c["recordId"]?.stringValue == verified.recordID,
                c["digest"]?.stringValue == verified.digest, let id = c["id"]?.intValue
            else {
                return record(
                    .invalid(
                        reason: "confirmation-mismatch",
                        detail: "\(confirmation.path) does not confirm this record's digest \(verified.digest)"),
                    verified)
            }
            return record(.stored(id: id), verified)
        }
        let pending = FileManager.default.fileExists(atPath: store.outbox.appendingPathComponent("\(fileID).json").path)
        return record(pending ? .outbox : .local, verified)
    }

    /// The row `history --json` prints: verified fields only.
    public var json: JSONValue {
        var o: [String: JSONValue] = ["recordId": .string(fileID), "state": .string(state.description)]
        if let v = verified, case .object(let r) = v.record {
            o["createdAt"] = .string(v.createdAt)
            o["trustworthiness"] = .number(Double(v.trustworthiness))
            o["method"] = r["method"] ?? .null
            o["digest"] = .string(v.digest)
            o["keyId"] = .string(v.keyID)
        }
        if case .invalid(_, let detail) = state { o["detail"] = .string(detail) }
        if case .stored(let id) = state { o["storedId"] = .number(Double(id)) }
        return .object(o)
    }
}
