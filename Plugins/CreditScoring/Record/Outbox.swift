import Foundation

/// What a receiver answers for a stored record.
public struct RecordConfirmation: Sendable, Equatable {
    public var id: Int
    public var recordID: String
    public var digest: String
    /// False when the record was already stored (a resend).
    public var newlyStored: Bool

    public init(id: Int, recordID: String, digest: String, newlyStored: Bool) {
        self.id = id
        self.recordID = recordID
        self.digest = digest
        self.newlyStored = newlyStored
    }
}

/// Where signed records are sent: verifies and stores one, answering a confirmation or throwing a
/// `RecordRejection` (the PostgreSQL receiver, `CreditReceiver`, is its own target: it runs beside the database, not
/// on the device).
public protocol RecordReceiver {
    func receive(_ bytes: [UInt8]) throws -> RecordConfirmation
}

/// Sends the outbox: each record to the receiver; a confirmed record's confirmation is saved and the outbox entry
/// removed; when the database cannot be reached or the receiver does not answer in time, the rest stays for the
/// next `send`; a rejected record is moved
/// out of the outbox into `rejected/` with its reason.
public enum Outbox {
    public struct Report: Sendable {
        public var confirmed: [RecordConfirmation] = []
        public var rejected: [(recordID: String, reason: String)] = []
        public var waiting = 0
        /// Why the database could not be used, when it could not.
        public var unreachable: String?
    }

    public static func flush(_ store: RecordStore, connect: () throws -> any RecordReceiver) -> Report {
        var report = Report()
        let files = store.files(in: store.outbox)
        guard !files.isEmpty else { return report }
        let receiver: any RecordReceiver
        do { receiver = try connect() } catch {
            report.unreachable = "\(error)"
            report.waiting = files.count
            return report
        }
        for (index, file) in files.enumerated() {
            let recordID = file.deletingPathExtension().lastPathComponent
            guard let data = try? [UInt8](contentsOf: file) else { continue }
            do {
                let c = try receiver.receive(data)
                let line = "{\"digest\":\"\(c.digest)\",\"id\":\(c.id),\"recordId\":\"\(c.recordID)\"}"
                try store.save(Array(line.utf8), recordID: recordID, in: store.confirmations)
                store.remove(recordID: recordID, from: store.outbox)
                report.confirmed.append(c)
            } catch let rejection as RecordRejection {
                _ = try? store.save(data, recordID: recordID, in: store.rejected)
                store.remove(recordID: recordID, from: store.outbox)
                report.rejected.append((recordID, rejection.reason))
            } catch {
                // Unreachable, or no decision in time: this and the rest wait for the next send.
                report.unreachable = "\(error)"
                report.waiting = files.count - index
                break
            }
        }
        return report
    }
}

extension [UInt8] {
    init(contentsOf file: URL) throws {
        guard let data = FileManager.default.contents(atPath: file.path) else {
            throw CreditError.io("cannot read \(file.path)")
        }
        self = [UInt8](data)
    }
}
