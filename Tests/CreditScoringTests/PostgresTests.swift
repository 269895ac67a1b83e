import CreditScoringPlugin
import Foundation
import SanadCore
import Testing

@Suite("credit PostgreSQL receiver", .serialized, .enabled(if: PostgresServer.available))
struct PostgresTests {
    @Test func verifiesStoresRejectsAndLogs() throws {
        let server = try PostgresServer()
        defer { server.destroy() }
        let f = try SignedFixture()
        let receiver = try CreditReceiver(conninfo: server.conninfo, crypto: f.lib)
        // Unknown key first: refused and logged.
        #expect(throws: RecordRejection.self) { try receiver.receive(f.bytes) }
        try receiver.register(publicKey: f.key.publicKey)
        let stored = try receiver.receive(f.bytes)
        #expect(stored.newlyStored && stored.recordID == "r-fixture" && stored.id > 0)
        let again = try receiver.receive(f.bytes)
        #expect(!again.newlyStored && again.id == stored.id)
        // A flipped byte, a replay with different content (validly signed), a stranger's key.
        var flipped = f.bytes
        flipped[flipped.count / 2] ^= 0x01
        #expect(throws: RecordRejection.self) { try receiver.receive(flipped) }
        var record = try #require(try JSONValue.parse(Data(f.bytes)).objectValue)
        record["signature"] = nil
        record["device"] = nil
        record["trustworthiness"] = .number(99)
        let replay = try CreditRecord.sign(record, key: f.key, lib: f.lib)
        #expect { try receiver.receive(replay) } throws: { ($0 as? RecordRejection)?.reason == "replay" }
        let reasons = try receiver.rejections().map(\.reason)
        #expect(reasons.first == "unknown-key" && reasons.contains("replay") && reasons.count == 3)
        #expect(try receiver.rejections().allSatisfy { $0.digest?.count == 64 })
        // No message text anywhere in the database: no three consecutive words of any message.
        let everything = try receiver.allText().joined(separator: "\n")
        #expect(everything.contains("r-fixture"))
        for line in CreditFixtures.plain.split(separator: "\n") {
            let words = (line.split(separator: "|").last ?? "").split(separator: " ")
            for i in 0..<max(0, words.count - 2) {
                let phrase = words[i...(i + 2)].joined(separator: " ")
                #expect(!everything.contains(phrase), "\(phrase)")
            }
        }
        #expect(try receiver.erase(keyID: f.key.keyID) == 1)
    }

    @Test func outboxWaitsWhileTheDatabaseIsDown() throws {
        let server = try PostgresServer()
        defer { server.destroy() }
        let f = try SignedFixture()
        try CreditReceiver(conninfo: server.conninfo, crypto: f.lib).register(publicKey: f.key.publicKey)
        try server.stop()
        let store = RecordStore(directory: try CreditFixtures.temporaryDirectory())
        try store.save(f.bytes, recordID: "r-fixture", in: store.outbox)
        let down = Outbox.flush(store) { try CreditReceiver(conninfo: server.conninfo, crypto: f.lib) }
        #expect(down.unreachable != nil && down.waiting == 1 && store.files(in: store.outbox).count == 1)
        try server.start()
        let up = Outbox.flush(store) { try CreditReceiver(conninfo: server.conninfo, crypto: f.lib) }
        #expect(up.confirmed.map(\.recordID) == ["r-fixture"] && up.unreachable == nil)
        #expect(store.files(in: store.outbox).isEmpty && store.files(in: store.confirmations).count == 1)
    }
}
