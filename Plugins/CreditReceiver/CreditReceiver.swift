import CreditScoringPlugin
import Foundation
import SanadCore

/// The receiving side (see README.md): Swift code that owns the `sanad_receiver` connection, run by `sanad credit
/// receiver serve` as a process of its own. For each staged submission (a device's `credit_submit`), in one
/// transaction, it reads the registered device keys, verifies the document (canonical bytes, fields, Ed25519
/// signature, a registered key) and only then inserts the record, or logs the refusal in `credit_rejections`
/// (time, reason, key id, digest — no content), and writes the outcome back for the device to read. A record id
/// seen before with the same digest is confirmed again (an outbox resend); with a different digest it is a replay
/// and refused. A signed erasure request (`ErasureRequest`) deletes the records of its own key.
public final class CreditReceiver: RecordReceiver {
    let db: PostgresConnection
    let crypto: LibCrypto

    /// What the server answers for a stored record.
    public typealias Confirmation = RecordConfirmation

    /// What became of one document.
    public enum Outcome: Sendable, Equatable {
        case stored(RecordConfirmation)
        case rejected(RecordRejection)
        /// An erasure request: how many records of the key went.
        case erased(keyID: String, count: Int)
    }

    /// Seconds a connection may take to open and a statement to run, unless `conninfo` sets its own
    /// (`connect_timeout`, `options`): a database that went silent is an error within them, the record kept in the
    /// outbox, never a hang.
    public static let defaultTimeout = 10

    /// Connects with the receiver's credentials (the tables must exist: `ReceiverSchema`, `receiver setup`).
    public init(conninfo: String, crypto: LibCrypto, timeout: Int = CreditReceiver.defaultTimeout) throws {
        db = try PostgresConnection(Self.withTimeouts(conninfo, seconds: timeout), lib: try LibPQ.shared())
        self.crypto = crypto
        try db.query("SET client_min_messages TO warning")
    }

    /// `conninfo` with libpq's `connect_timeout` and a server-side `statement_timeout` of `seconds` added where it
    /// sets none (key=value form, or a `postgres://` URI's query).
    public static func withTimeouts(_ conninfo: String, seconds: Int) -> String {
        let uri = conninfo.hasPrefix("postgres://") || conninfo.hasPrefix("postgresql://")
        var extra: [(String, String)] = []
        if !conninfo.contains("connect_timeout") { extra.append(("connect_timeout", "\(seconds)")) }
        if !conninfo.contains("options") { extra.append(("options", "-c statement_timeout=\(seconds * 1000)")) }
        guard !extra.isEmpty else { return conninfo }
        if uri {
            let query = extra.map { key, value in
                "\(key)=" + (value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value)
            }
            return conninfo + (conninfo.contains("?") ? "&" : "?") + query.joined(separator: "&")
        }
        return ([conninfo] + extra.map { "\($0)='\($1)'" }).joined(separator: " ")
    }

    /// Enrolls a device's public key (32 bytes; the operator's step, `receiver enroll`); returns its key id.
    @discardableResult
    public func register(publicKey: [UInt8]) throws -> String {
        let keyID = String(try SHA256Digest.hex(publicKey, lib: crypto).prefix(16))
        try db.query(
            "INSERT INTO credit_device_keys (key_id, public_key) VALUES ($1, $2) ON CONFLICT (key_id) DO NOTHING",
            [keyID, Hex.encode(publicKey)])
        return keyID
    }

    /// Verifies and stores `bytes` directly (the staging table bypassed: the receiver's own tests and tools),
    /// or logs and throws the `RecordRejection`.
    public func receive(_ bytes: [UInt8]) throws -> Confirmation {
        switch try transaction({ try decide(bytes) }) {
        case .stored(let confirmation): return confirmation
        case .rejected(let rejection): throw rejection
        case .erased: throw CreditError.record("an erasure request is not a record")
        }
    }

    /// Decides the oldest pending submission, writing its outcome back; nil when none waits. Submissions locked
    /// by another receiver process are skipped.
    public func processNext() throws -> Outcome? {
        try transaction {
            guard
                let row = try db.query(
                    "SELECT id, document FROM credit_submissions WHERE state = 'pending' ORDER BY id LIMIT 1 "
                        + "FOR UPDATE SKIP LOCKED"
                ).first, let id = row[0], let document = row[1]
            else { return nil }
            let outcome = try decide(Array(document.utf8))
            let fields: (state: String, result: String?, digest: String?, reason: String?)
            switch outcome {
            case .stored(let c): fields = ("stored", String(c.id), c.digest, c.newlyStored ? nil : "already-stored")
            case .rejected(let r): fields = ("rejected", nil, r.digest, r.reason)
            case .erased(_, let count): fields = ("erased", String(count), nil, nil)
            }
            try db.query(
                "UPDATE credit_submissions SET state = $2, result_id = $3::bigint, digest = $4, reason = $5, "
                    + "decided_at = now() WHERE id = $1::bigint",
                [id, fields.state, fields.result, fields.digest, fields.reason])
            return outcome
        }
    }

    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try db.query("BEGIN")
        do {
            let result = try body()
            try db.query("COMMIT")
            return result
        } catch {
            _ = try? db.query("ROLLBACK")
            throw error
        }
    }

    /// Inside a transaction: verifies `bytes` against the registered keys and stores the record, erases the
    /// records an erasure request's key signed, or logs the refusal.
    func decide(_ bytes: [UInt8]) throws -> Outcome {
        let keys = Set(
            try db.query("SELECT public_key FROM credit_device_keys").compactMap { $0.first ?? nil })
        var text = bytes
        if text.last == 10 { text.removeLast() }
        if let value = try? JSONValue.parse(Data(text)), ErasureRequest.claims(value) {
            do {
                let digest = try SHA256Digest.hex(text, lib: crypto)
                let keyID = try ErasureRequest.verify(
                    text, value: value, digest: digest, lib: crypto, registeredKeys: keys)
                return .erased(keyID: keyID, count: try erase(keyID: keyID))
            } catch let rejection as RecordRejection {
                try log(rejection)
                return .rejected(rejection)
            }
        }
        let verified: VerifiedRecord
        do {
            verified = try RecordVerifier.verify(bytes, lib: crypto, registeredKeys: keys)
        } catch let rejection as RecordRejection {
            try log(rejection)
            return .rejected(rejection)
        }
        if let row = try db.query(
            "SELECT id, digest FROM credit_records WHERE record_id = $1", [verified.recordID]
        ).first {
            guard row[1] == verified.digest else {
                let replay = RecordRejection(
                    reason: "replay", detail: "record \(verified.recordID) was stored with different content",
                    keyID: verified.keyID, digest: verified.digest)
                try log(replay)
                return .rejected(replay)
            }
            return .stored(
                Confirmation(
                    id: Int(row[0] ?? "") ?? 0, recordID: verified.recordID, digest: verified.digest,
                    newlyStored: false))
        }
        let inserted = try db.query(
            "INSERT INTO credit_records (record_id, key_id, digest, trustworthiness, record) VALUES ($1, $2, $3, $4, $5) RETURNING id",
            [
                verified.recordID, verified.keyID, verified.digest, String(verified.trustworthiness),
                String(decoding: text, as: UTF8.self),
            ])
        return .stored(
            Confirmation(
                id: Int(inserted.first?.first.flatMap { $0 } ?? "") ?? 0, recordID: verified.recordID,
                digest: verified.digest, newlyStored: true))
    }

    /// Logs a rejection (committed with the transaction that decided it).
    private func log(_ rejection: RecordRejection) throws {
        try db.query(
            "INSERT INTO credit_rejections (reason, key_id, digest) VALUES ($1, $2, $3)",
            [rejection.reason, rejection.keyID, rejection.digest])
    }

    /// The logged rejections, newest last: (reason, key id, digest).
    public func rejections() throws -> [(reason: String, keyID: String?, digest: String?)] {
        try db.query("SELECT reason, key_id, digest FROM credit_rejections ORDER BY id").map {
            ($0[0] ?? "", $0[1], $0[2])
        }
    }

    /// One `SELECT 1` round trip (the debug status's latency probe).
    public func ping() throws {
        _ = try db.query("SELECT 1")
    }

    /// The server's version (`15.18 (Debian 15.18-0+deb12u1)`).
    public func serverVersion() throws -> String {
        (try db.query("SHOW server_version").first?.first ?? nil) ?? "?"
    }

    /// Deletes the stored records of a device key (the person's erasure request); returns how many.
    public func erase(keyID: String) throws -> Int {
        try db.query("DELETE FROM credit_records WHERE key_id = $1 RETURNING id", [keyID]).count
    }

    /// Retention: deletes the stored records received more than `days` days ago; returns how many went.
    @discardableResult
    public func prune(olderThanDays days: Int) throws -> Int {
        try prune(receivedBefore: Date().addingTimeInterval(-Double(days) * 86_400))
    }

    /// Deletes the stored records received before `date`, and the decided submissions (which hold the documents)
    /// made before it; returns how many records went.
    @discardableResult
    public func prune(receivedBefore date: Date) throws -> Int {
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let cutoff = iso.string(from: date)
        return try transaction {
            try db.query(
                "DELETE FROM credit_submissions WHERE state <> 'pending' AND submitted_at < $1::timestamptz", [cutoff])
            return try db.query(
                "DELETE FROM credit_records WHERE received_at < $1::timestamptz RETURNING id", [cutoff]
            ).count
        }
    }

    /// Every text value in every table of the public schema (for the test that no message text is stored).
    public func allText() throws -> [String] {
        let tables = try db.query(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        ).compactMap { $0[0] }
        var out: [String] = []
        for table in tables {
            let quoted = "\"" + table.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            for row in try db.query("SELECT t::text FROM \(quoted) t") { out += row.compactMap { $0 } }
        }
        return out
    }
}
