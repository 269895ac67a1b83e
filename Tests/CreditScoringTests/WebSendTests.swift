import Foundation
import SanadCore
import SanadTestSupport
import Testing

/// The web app's credit place against a real receiver: `sanad serve` with `SANAD_CREDIT_DB`, an analysis run
/// through the page's calls, and its record sent by `POST /credit/api/send` to PostgreSQL through the receiver
/// process.
@Suite("credit place: send to the receiver", .serialized)
struct WebSendTests {
    /// A JSON call to the server at `port` (curl: these tests have no HTTP client of their own).
    func call(_ port: Int, _ method: String, _ path: String, _ body: JSONValue? = nil) throws -> JSONValue {
        var arguments = ["-s", "-X", method, "http://127.0.0.1:\(port)\(path)"]
        if let body { arguments += ["-H", "Content-Type: application/json", "--data-binary", body.jsonString] }
        let r = try runChildProcess(URL(fileURLWithPath: "/usr/bin/curl"), arguments)
        return try JSONValue.parse(r.stdout)
    }

    @Test("a record analysed in the page is sent, stored, then already stored; the status probes the receiver")
    func sendFromThePage() throws {
        guard PostgresServer.available, SanadCLI.executable != nil,
            FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")
        else { return }
        let database = try PostgresServer(receiver: true)
        defer { database.destroy() }
        let data = try CreditFixtures.temporaryDirectory()
        let environment = ["SANAD_DATA": data.path, "SANAD_CREDIT_DB": database.device]
        let server = try ServerProcess(
            [
                "--backend", "pure-swift", "-m", TestPaths.smolLM2, "-c", "512", "--tier", "4gb", "--no-embeddings",
                "--now", "2026-11-22",
            ], environment: environment)
        let port = server.port
        #expect(try call(port, "GET", "/credit/api/state")["receiverConfigured"] == .bool(true))
        let started = try call(
            port, "POST", "/credit/api/start",
            .object(["messages": .string(CreditFixtures.plain), "consent": .bool(true)]))
        let job = try #require(started["job"]?.stringValue, "\(started)")
        var result: JSONValue = .null
        for _ in 0..<600 where result == .null {
            let j = try call(port, "GET", "/credit/api/job?id=\(job)")
            if j["state"]?.stringValue == "done" { result = j["result"] ?? .null }
            Thread.sleep(forTimeInterval: 0.1)
        }
        let recordID = try #require(result["recordId"]?.stringValue, "\(result)")
        // The operator enrolls the device's key; the receiver service verifies what the device stages.
        let device = try SanadCLI.run(["credit", "status", "--json"], environment: environment)
        let key = try #require(try JSONValue.parse(device.stdout)["publicKey"]?.stringValue, "\(device.stdout)")
        let enrolled = try SanadCLI.run(["credit", "receiver", "enroll", key, "--db", database.receiver])
        #expect(enrolled.status == 0, "\(enrolled.stderr)")
        let receiver = try ReceiverProcess(conninfo: database.receiver)
        defer { receiver.stop() }
        let sent = try call(port, "POST", "/credit/api/send", .object(["id": .string(recordID)]))
        let confirmed = sent["confirmed"]?.arrayValue?.first
        #expect(confirmed?["recordId"]?.stringValue == recordID && confirmed?["new"] == .bool(true), "\(sent)")
        #expect(try database.count("credit_records") == 1)
        let again = try call(port, "POST", "/credit/api/send", .object(["id": .string(recordID)]))
        #expect(again["alreadyStored"]?["recordId"]?.stringValue == recordID, "\(again)")
        // The debug status: the receiver reachable with its latency, the send confirmed among the recent events.
        let status = try call(port, "GET", "/credit/api/status")
        #expect(status["database"]?["reachable"] == .bool(true), "\(status)")
        #expect(status["database"]?["roundTripMilliseconds"]?.doubleValue != nil)
        #expect(status["recent"]?.arrayValue?.last?["kind"]?.stringValue == "confirmed", "\(status)")
        try database.stop()
        let down = try call(port, "GET", "/credit/api/status")
        #expect(down["database"]?["reachable"] == .bool(false), "\(down)")
        try database.start()
        #expect(server.stop() == 0, "\(server.stderr)")
    }
}
