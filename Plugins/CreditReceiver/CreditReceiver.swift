import CreditScoringPlugin
import Foundation

/// The receiving side (see README.md, "PostgreSQL"): Swift code that owns the database connection. In one
/// transaction it reads the registered device keys, verifies the record (canonical bytes, fields, Ed25519
/// signature, a registered key) and only then inserts it; a refused record is logged in `credit_rejections`
/// (time, reason, key id, digest — no content). A record id seen before with the same digest is confirmed again
/// (an outbox resend); with a different digest it is a replay and refused.
public final class CreditReceiver: RecordReceiver {
    let db: PostgresConnection
    let crypto: LibCrypto

    public static let schema = """
        CREATE TABLE IF NOT EXISTS credit_device_keys (
            key_id text PRIMARY KEY, public_key text NOT NULL UNIQUE, registered_at timestamptz NOT NULL DEFAULT now());
        CREATE TABLE IF NOT EXISTS credit_records (
            id bigserial PRIMARY KEY, record_id text NOT NULL UNIQUE,
            key_id text NOT NULL REFERENCES credit_device_keys(key_id), digest text NOT NULL,
            trustworthiness integer NOT NULL, record text NOT NULL, received_at timestamptz NOT NULL DEFAULT now());
        CREATE TABLE IF NOT EXISTS credit_rejections (
            id bigserial PRIMARY KEY, at timestamptz NOT NULL DEFAULT now(), reason text NOT NULL, key_id text,
            digest text);
        """

    /// What the server answers for a stored record.
    public typealias Confirmation = RecordConfirmation

    /// Seconds a connection may take to open and a statement to run, unless `conninfo` sets its own
    /// (`connect_timeout`, `options`): a database that went silent is an error within them, the record kept in the
    /// outbox, never a hang.
    public static let defaultTimeout = 10

    public init(conninfo: String, crypto: LibCrypto, timeout: Int = CreditReceiver.defaultTimeout) throws {
        db = try PostgresConnection(Self.withTimeouts(conninfo, seconds: timeout), lib: try LibPQ.shared())
        self.crypto = crypto
        try db.query("SET client_min_messages TO warning")
        for statement in Self.schema.split(separator: ";")
        where !statement.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            try db.query(String(statement))
        }
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

    /// Registers a device's public key (64 hex digits); returns its key id.
    @discardableResult
    public func register(publicKey: [UInt8]) throws -> String {
        let keyID = String(try SHA256Digest.hex(publicKey, lib: crypto).prefix(16))
        try db.query(
            "INSERT INTO credit_device_keys (key_id, public_key) VALUES ($1, $2) ON CONFLICT (key_id) DO NOTHING",
            [keyID, Hex.encode(publicKey)])
        return keyID
    }

    /// Verifies and stores `bytes`, or logs and throws the `RecordRejection`.
    public func receive(_ bytes: [UInt8]) throws -> Confirmation {
        try db.query("BEGIN")
        do {
            let keys = Set(
                try db.query("SELECT public_key FROM credit_device_keys FOR SHARE").compactMap { $0.first ?? nil })
            let verified: VerifiedRecord
            do {
                verified = try RecordVerifier.verify(bytes, lib: crypto, registeredKeys: keys)
            } catch let rejection as RecordRejection {
                try log(rejection)
                throw rejection
            }
            if let row = try db.query(
                "SELECT id, digest FROM credit_records WHERE record_id = $1 FOR UPDATE", [verified.recordID]
            ).first {
                guard row[1] == verified.digest else {
                    let replay = RecordRejection(
                        reason: "replay", detail: "record \(verified.recordID) was stored with different content",
                        keyID: verified.keyID, digest: verified.digest)
                    try log(replay)
                    throw replay
                }
                try db.query("COMMIT")
                return Confirmation(
                    id: Int(row[0] ?? "") ?? 0, recordID: verified.recordID, digest: verified.digest, newlyStored: false
                )
            }
            var text = bytes
            if text.last == 10 { text.removeLast() }
            let inserted = try db.query(
                "INSERT INTO credit_records (record_id, key_id, digest, trustworthiness, record) VALUES ($1, $2, $3, $4, $5) RETURNING id",
                [
                    verified.recordID, verified.keyID, verified.digest, String(verified.trustworthiness),
                    String(decoding: text, as: UTF8.self),
                ])
            try db.query("COMMIT")
            return Confirmation(
                id: Int(inserted.first?.first.flatMap { $0 } ?? "") ?? 0, recordID: verified.recordID,
                digest: verified.digest, newlyStored: true)
        } catch {
            _ = try? db.query("ROLLBACK")
            throw error
        }
    }

    /// Logs a rejection and commits the log entry (the transaction holds nothing else).
    private func log(_ rejection: RecordRejection) throws {
        try db.query(
            "INSERT INTO credit_rejections (reason, key_id, digest) VALUES ($1, $2, $3)",
            [rejection.reason, rejection.keyID, rejection.digest])
        try db.query("COMMIT")
        try db.query("BEGIN")
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

    /// Deletes the stored records received before `date`; returns how many went.
    @discardableResult
    public func prune(receivedBefore date: Date) throws -> Int {
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return try db.query(
            "DELETE FROM credit_records WHERE received_at < $1::timestamptz RETURNING id", [iso.string(from: date)]
        ).count
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
