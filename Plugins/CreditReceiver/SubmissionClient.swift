import CreditScoringPlugin
import Foundation
import SanadCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The device's side of the receiver (`sanad credit send`, `privacy --erase --db`): it connects as `sanad_device`,
/// whose only rights are `credit_submit` and `credit_submission` (`ReceiverSchema`), stages a signed document and
/// waits for the separate receiver service to decide it. It never sees a table.
public final class SubmissionClient: RecordReceiver {
    let db: PostgresConnection
    /// Seconds to wait for the receiver's decision of one submission (also the connect and statement timeout).
    public let timeout: Int

    /// What the receiver decided about one submission.
    public struct Decision: Sendable, Equatable {
        /// `stored`, `rejected` or `erased`.
        public var state: String
        /// The record's id (stored), or how many records went (erased).
        public var resultID: Int?
        public var digest: String?
        /// Why it was rejected; `already-stored` for a record stored before.
        public var reason: String?
    }

    /// No decision arrived within `timeout` seconds: the document stays in the outbox for the next `send`.
    public struct TimedOut: Error, CustomStringConvertible {
        public var seconds: Int
        public var description: String {
            "no confirmation from the receiver within \(seconds) s (is 'sanad credit receiver serve' running?)"
        }
    }

    public init(conninfo: String, timeout: Int = CreditReceiver.defaultTimeout) throws {
        db = try PostgresConnection(
            CreditReceiver.withTimeouts(conninfo, seconds: timeout), lib: try LibPQ.shared())
        self.timeout = timeout
    }

    /// Stages `bytes` (one final newline dropped); returns the submission's ticket.
    public func submit(_ bytes: [UInt8]) throws -> String {
        let text = String(decoding: bytes.last == 10 ? Array(bytes.dropLast()) : bytes, as: UTF8.self)
        guard let ticket = try db.query("SELECT credit_submit($1)", [text]).first?.first ?? nil else {
            throw CreditError.io("PostgreSQL: credit_submit returned no ticket")
        }
        return ticket
    }

    /// Polls the ticket's outcome every 50 ms until the receiver decides it or `timeout` seconds pass.
    public func wait(for ticket: String) throws -> Decision {
        let deadline = Date().addingTimeInterval(Double(timeout))
        while true {
            if let row = try db.query("SELECT * FROM credit_submission($1::uuid)", [ticket]).first,
                let state = row[0], state != "pending"
            {
                return Decision(state: state, resultID: row[1].flatMap { Int($0) }, digest: row[2], reason: row[3])
            }
            guard Date() < deadline else { throw TimedOut(seconds: timeout) }
            usleep(50_000)
        }
    }

    /// Submits a record and waits: the confirmation, or the receiver's `RecordRejection`.
    public func receive(_ bytes: [UInt8]) throws -> RecordConfirmation {
        let decision = try wait(for: try submit(bytes))
        let recordID = (try? JSONValue.parse(Data(bytes)))?["recordId"]?.stringValue ?? "?"
        guard decision.state == "stored", let id = decision.resultID, let digest = decision.digest else {
            throw RecordRejection(
                reason: decision.reason ?? decision.state, detail: "the receiver refused the record",
                digest: decision.digest)
        }
        return RecordConfirmation(
            id: id, recordID: recordID, digest: digest, newlyStored: decision.reason != "already-stored")
    }

    /// Submits a signed erasure request and waits: how many of this key's records the receiver deleted.
    public func erase(_ request: [UInt8]) throws -> Int {
        let decision = try wait(for: try submit(request))
        guard decision.state == "erased", let count = decision.resultID else {
            throw RecordRejection(
                reason: decision.reason ?? decision.state, detail: "the receiver refused the erasure request")
        }
        return count
    }

    /// One `SELECT 1` round trip (the debug status's latency probe).
    public func ping() throws { _ = try db.query("SELECT 1") }

    /// The server's version (`15.18 (Debian 15.18-0+deb12u1)`).
    public func serverVersion() throws -> String {
        (try db.query("SHOW server_version").first?.first ?? nil) ?? "?"
    }
}
