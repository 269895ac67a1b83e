import Foundation
import SanadCore
import SanadTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The reproductions of issue 42 against a real `sanad serve` on 127.0.0.1 (SmolLM2, one slot): each hostile
/// request is answered (or refused) in bounded time, and the server then answers /health and a normal request.
@Suite(
    "sanad serve under hostile clients", .serialized,
    .enabled(if: SanadCLI.executable != nil && TestPaths.model(TestPaths.smolLM2) != nil))
struct ServeHostileTests {
    static let engine = ServeEndToEndTests.engine + ["--slots", "1", "--no-embeddings"]

    /// /health is 200 with no slot busy, and a short completion is served.
    func stillServing(_ port: Int) throws {
        var health = try request(port, "GET", "/health")
        for _ in 0..<50 where health.json?["slots_busy"]?.intValue != 0 {
            usleep(100_000)
            health = try request(port, "GET", "/health")
        }
        #expect(health.status == 200 && health.json?["slots_busy"]?.intValue == 0, "\(health.body)")
        // Closed clients' bodies are released as the reader drains their sockets, so a 503 "retry shortly" can
        // still come right after they close: retry as its message asks, for a bounded time.
        var normal = try request(port, "POST", "/v1/completions", body: #"{"prompt":"Hi","max_tokens":2}"#)
        for _ in 0..<100 where normal.status == 503 && normal.body.contains("retry shortly") {
            usleep(100_000)
            normal = try request(port, "POST", "/v1/completions", body: #"{"prompt":"Hi","max_tokens":2}"#)
        }
        #expect(normal.status == 200, "\(normal.body)")
    }

    @Test("tool call arguments nested 500 deep are a 400, and the server lives on")
    func deepToolArguments() throws {
        let server = try ServerProcess(Self.engine)
        let deep = String(repeating: "[", count: 500) + String(repeating: "]", count: 500)
        let reply = try request(server.port, "POST", "/v1/chat/completions", body: deepToolCallBody(arguments: deep))
        #expect(reply.status == 400, "\(reply.body)")
        #expect(reply.body.contains("nested deeper than 64 levels"), "\(reply.body)")
        let deepBody = String(repeating: #"{"a":"#, count: 500) + "1" + String(repeating: "}", count: 500)
        #expect(try request(server.port, "POST", "/v1/chat/completions", body: deepBody).status == 400)
        try stillServing(server.port)
        #expect(server.stop() == 0, "\(server.stderr)")
    }

    @Test("a schema of nested anyOfs over shared $refs answers at once; one over the work budget is a 400 naming it")
    func schemaWork() throws {
        let server = try ServerProcess(Self.engine)
        let schema = fanOutSchema(depth: 15, width: 6)
        func chat(_ extra: [String: JSONValue]) -> String {
            var body: [String: JSONValue] = [
                "messages": .array([.object(["role": .string("user"), "content": .string("A number?")])]),
                "max_tokens": .number(8), "temperature": .number(0),
            ]
            body.merge(extra) { $1 }
            return JSONValue.object(body).jsonString
        }
        let started = ContinuousClock.now
        let formatted = try request(
            server.port, "POST", "/v1/chat/completions",
            body: chat([
                "response_format": .object([
                    "type": .string("json_schema"), "json_schema": .object(["name": .string("n"), "schema": schema]),
                ])
            ]))
        #expect(formatted.status == 200, "\(formatted.body)")
        let tool: JSONValue = .object([
            "type": .string("function"),
            "function": .object([
                "name": .string("f"),
                "parameters": .object([
                    "type": .string("object"), "properties": .object(["n": schema]), "required": .array([.string("n")]),
                ]),
            ]),
        ])
        let called = try request(
            server.port, "POST", "/v1/chat/completions",
            body: chat(["tools": .array([tool]), "tool_choice": .string("required"), "max_tokens": .number(48)]))
        #expect(called.status == 200 || called.status == 400, "\(called.body)")
        #expect(started.duration(to: .now) < .seconds(60))

        let consts = (0...256).map { JSONValue.object(["const": .number(Double($0))]) }
        let tooWide = try request(
            server.port, "POST", "/v1/chat/completions",
            body: chat([
                "response_format": .object([
                    "type": .string("json_schema"),
                    "json_schema": .object(["name": .string("n"), "schema": .object(["anyOf": .array(consts)])]),
                ])
            ]))
        #expect(tooWide.status == 400 && tooWide.body.contains("work budget is 256"), "\(tooWide.body)")
        try stillServing(server.port)
        #expect(server.stop() == 0, "\(server.stderr)")
    }

    @Test("a client that half-closes after sending (nc -N) is answered normally, plain and streamed")
    func halfClose() throws {
        let server = try ServerProcess(Self.engine)
        for stream in [false, true] {
            let body = #"{"prompt":"Hi","max_tokens":4,"stream":\#(stream)}"#
            let c = try RawConnection(port: server.port)
            c.send(
                "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "Content-Length: \(body.utf8.count)\r\n\r\n" + body)
            c.shutdownWrite()
            let reply = try parseReply(c.receiveAll())
            #expect(reply.status == 200, "\(reply.body)")
            #expect(stream ? reply.body.contains("[DONE]") : reply.json?["choices"] != nil, "\(reply.body)")
        }
        try stillServing(server.port)
        #expect(server.stop() == 0, "\(server.stderr)")
    }

    @Test("embeddings take their own bounded queue: with --queue 0 a second batch during a long one is a 503")
    func embeddingsQueue() throws {
        let server = try ServerProcess(ServeEndToEndTests.engine + ["--slots", "1", "--queue", "0"])
        let text = String(repeating: "the quick brown fox jumps over the lazy dog ", count: 40)
        let long = JSONValue.object(["input": .array(Array(repeating: .string(text), count: 64))]).jsonString
        let first = RawReplyBox()
        let port = server.port
        let thread = Thread { first.set(try? request(port, "POST", "/v1/embeddings", body: long)) }
        thread.start()
        var busy: RawReply?
        for _ in 0..<100 where busy?.status != 503 && first.get() == nil {
            usleep(50_000)
            busy = try request(server.port, "POST", "/v1/embeddings", body: #"{"input":"hi"}"#)
        }
        #expect(busy?.status == 503 && busy?.body.contains("embedding slots are busy") == true, "\(busy?.body ?? "")")
        // Bounded: a long request that failed (timed out) leaves the box empty, and the expectation below says so.
        for _ in 0..<1200 where first.get() == nil { usleep(100_000) }
        #expect(first.get()?.status == 200, "the long embeddings request got no answer within 2 minutes")
        #expect(try request(server.port, "POST", "/v1/embeddings", body: #"{"input":"hi"}"#).status == 200)
        try stillServing(server.port)
        #expect(server.stop() == 0, "\(server.stderr)")
    }

    @Test(
        "browser safety: a foreign Host is 400, a cross-site or non-JSON POST is refused, conversations follow the cookie"
    )
    func browserSafety() throws {
        let server = try ServerProcess(Self.engine + ["--allowed-origins", "http://app.example"])
        let port = server.port
        let prompt = #"{"prompt":"Hi","max_tokens":2}"#
        func raw(_ head: [String], body: String = "") throws -> RawReply {
            let c = try RawConnection(port: port)
            c.send(
                (head + ["Connection: close", "Content-Length: \(body.utf8.count)", "", body]).joined(separator: "\r\n")
            )
            return try parseReply(c.receiveAll())
        }
        let rebound = try raw(["POST /chat/open HTTP/1.1", "Host: attacker.example", "Content-Type: application/json"])
        #expect(rebound.status == 400 && rebound.body.contains("--allowed-hosts attacker.example"), "\(rebound.body)")
        let plain = try raw(
            ["POST /v1/completions HTTP/1.1", "Host: 127.0.0.1:\(port)", "Content-Type: text/plain"], body: prompt)
        #expect(plain.status == 415 && plain.body.contains("application/json"), "\(plain.body)")
        let crossSite = try raw(
            [
                "POST /v1/completions HTTP/1.1", "Host: 127.0.0.1:\(port)", "Content-Type: application/json",
                "Origin: http://evil.example",
            ], body: prompt)
        #expect(crossSite.status == 403, "\(crossSite.body)")
        // The server's own pages, and an allowed origin, may POST.
        for (host, origin) in [("127.0.0.1:\(port)", "http://127.0.0.1:\(port)"), ("localhost", "http://app.example")] {
            let allowed = try raw(
                [
                    "POST /v1/completions HTTP/1.1", "Host: \(host)", "Content-Type: application/json; charset=utf-8",
                    "Origin: \(origin)",
                ], body: prompt)
            #expect(allowed.status == 200, "\(origin): \(allowed.body)")
        }
        // A conversation answers only to the browser whose cookie opened it.
        let opened = try request(port, "POST", "/chat/open", body: "{}")
        let id = try #require(opened.json?["conversation"]?.stringValue, "\(opened.body)")
        let cookie = try #require(opened.headers["set-cookie"], "\(opened.headers)")
        #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"))
        let back = JSONValue.object(["conversation": .string(id)]).jsonString
        let other = "Cookie: sanad_browser=" + String(repeating: "0", count: 32)
        #expect(try request(port, "POST", "/chat/back", body: back, headers: [other]).status == 400)
        let own = "Cookie: " + (cookie.split(separator: ";").first.map(String.init) ?? "")
        #expect(try request(port, "POST", "/chat/back", body: back, headers: [own]).status == 200)
        // 70 opens by other clients do not evict it.
        for _ in 0..<70 { _ = try request(port, "POST", "/chat/open", body: "{}") }
        #expect(try request(port, "POST", "/chat/back", body: back, headers: [own]).status == 200)
        try stillServing(port)
        #expect(server.stop() == 0, "\(server.stderr)")
    }

    @Test("300 slowloris and 40 idle sockets cost no thread: other clients are served at once, and slow ones get 408")
    func slowloris() throws {
        let server = try ServerProcess(Self.engine + ["--read-timeout", "3"])
        let port = server.port
        var slow: [RawConnection] = []
        for i in 0..<340 {
            let c = try RawConnection(port: port)
            if i < 300 { c.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ") }
            slow.append(c)
        }
        let started = ContinuousClock.now
        try stillServing(port)
        #expect(started.duration(to: .now) < .seconds(3), "others waited \(started.duration(to: .now))")
        #expect(try parseReply(slow[0].receiveAll()).status == 408)
        for c in slow { c.close() }
        try stillServing(port)
        #expect(server.stop() == 0, "\(server.stderr)")
    }

    @Test("request bodies hold bounded memory: past the budget a 4 MiB body is 503 at its head, RSS stays bounded")
    func bodyMemory() throws {
        let server = try ServerProcess(Self.engine)
        let port = server.port
        let chunk = [UInt8](repeating: UInt8(ascii: " "), count: 1 << 20)
        var clients: [RawConnection] = []
        var refused = 0
        for _ in 0..<24 {
            let c = try RawConnection(port: port)
            c.send(
                "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "Content-Length: \(4 << 20)\r\n\r\n")
            for _ in 0..<3 { c.send(chunk) }
            clients.append(c)
        }
        for c in clients {
            var timeout = timeval(tv_sec: 0, tv_usec: 300_000)
            setsockopt(c.fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            if let reply = try? parseReply(c.receive()), reply.status == 503 { refused += 1 }
        }
        let rss = residentMiB(server.process.processIdentifier)
        print("body memory: \(refused) of 24 clients refused at their head; server RSS \(rss) MiB")
        #expect(refused >= 24 - 16, "\(refused) of 24 refused")
        #expect(rss < 400, "RSS \(rss) MiB with 24 clients each holding 3 of 4 MiB")
        for c in clients { c.close() }
        try stillServing(port)
        #expect(server.stop() == 0, "\(server.stderr)")
    }

    @Test("with --api-key a request without the key is 401 at its head: its body is never waited for")
    func keyAtHead() throws {
        let server = try ServerProcess(Self.engine + ["--api-key", "k3y"])
        let c = try RawConnection(port: server.port)
        c.send(
            "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
        )
        let started = ContinuousClock.now
        let reply = try parseReply(c.receiveAll())
        #expect(reply.status == 401 && started.duration(to: .now) < .seconds(3), "\(reply.body)")
        let health = try request(server.port, "GET", "/health")
        #expect(health.status == 200)
        let normal = try request(
            server.port, "POST", "/v1/completions", body: #"{"prompt":"Hi","max_tokens":2}"#,
            headers: ["Authorization: Bearer k3y"])
        #expect(normal.status == 200, "\(normal.body)")
        #expect(server.stop() == 0, "\(server.stderr)")
    }

    @Test("500 pipelined requests on one connection are answered in order without waiting on the reader's poll")
    func pipelined() throws {
        let server = try ServerProcess(Self.engine)
        let c = try RawConnection(port: server.port)
        let one = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        let started = ContinuousClock.now
        c.send(
            String(repeating: one, count: 499)
                + "GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        let all = String(decoding: c.receiveAll(), as: UTF8.self)
        #expect(all.components(separatedBy: "HTTP/1.1 200 OK").count == 501)
        #expect(all.hasSuffix("}") && all.contains("SmolLM2"), "\(all.suffix(200))")
        #expect(started.duration(to: .now) < .seconds(10), "\(started.duration(to: .now))")
        try stillServing(server.port)
        #expect(server.stop() == 0, "\(server.stderr)")
    }
}

/// A reply handed from a client thread to the test.
final class RawReplyBox: @unchecked Sendable {  // `reply` is guarded by `lock`
    private let lock = NSLock()
    private var reply: RawReply?
    func set(_ r: RawReply?) { lock.withLock { reply = r } }
    func get() -> RawReply? { lock.withLock { reply } }
}

/// A process's resident memory in MiB (`VmRSS` of /proc/PID/status; 0 when unreadable).
func residentMiB(_ pid: Int32) -> Int {
    let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
    guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
        let kib = Int(line.split(separator: " ").dropFirst().first ?? "")
    else { return 0 }
    return kib >> 10
}
