import SanadCore
import SanadServer
import SanadTestSupport
import Testing

/// The request parser against well-formed, malformed and hostile heads, and a bounded fuzz sample.
@Suite("HTTP request parsing")
struct HTTPParserTests {
    let limits = HTTPLimits(maximumHeaderBytes: 1024, maximumHeaderCount: 8, maximumBodyBytes: 4096)

    func parse(_ text: String) -> HTTPHeadParse { parseRequestHead(Array(text.utf8), limits: limits) }

    func status(_ text: String) -> Int? {
        if case .failure(let e) = parse(text) { return e.status }
        return nil
    }

    @Test("a request line and headers: method, target, version, lower-cased names, trimmed values, body offset")
    func wellFormed() throws {
        let text = "POST /v1/chat/completions?x=1 HTTP/1.1\r\nHost: a\r\nContent-Type:  application/json \r\n\r\n{}"
        guard case .complete(let head, let n) = parse(text) else {
            Issue.record("not parsed: \(parse(text))")
            return
        }
        #expect(head.method == "POST" && head.target == "/v1/chat/completions?x=1" && head.minorVersion == 1)
        #expect(head.path == "/v1/chat/completions")
        #expect(head.header("content-type") == "application/json" && head.header("host") == "a")
        #expect(n == text.utf8.count - 2)
        #expect(head.keepAlive)
    }

    @Test("keep-alive: HTTP/1.1 unless close, HTTP/1.0 only when asked; bare LF lines and leading CRLF accepted")
    func keepAliveAndLineEnds() throws {
        func head(_ t: String) -> HTTPRequestHead? {
            if case .complete(let h, _) = parse(t) { return h }
            return nil
        }
        #expect(head("GET / HTTP/1.1\r\nConnection: close\r\n\r\n")?.keepAlive == false)
        #expect(head("GET / HTTP/1.0\r\n\r\n")?.keepAlive == false)
        #expect(head("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n")?.keepAlive == true)
        #expect(head("\r\nGET /a HTTP/1.1\nHost: x\n\n")?.header("host") == "x")
    }

    @Test("an unfinished head is incomplete until the header limit, then 431; too many fields is 431")
    func limitsOnHeaders() {
        #expect(parse("GET / HTTP/1.1\r\nHost: a\r\n") == .incomplete)
        #expect(parse("GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: 900)) == .incomplete)
        #expect(status("GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: 2000)) == 431)
        #expect(status("GET / HTTP/1.1\r\n" + String(repeating: "X: 1\r\n", count: 9) + "\r\n") == 431)
        // Blank lines before the request line count against the limit too.
        #expect(status(String(repeating: "\r\n", count: 600)) == 431)
        #expect(
            status(String(repeating: "\r\n", count: 400) + "GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: 300))
                == 431)
        #expect(status(String(repeating: "\r\n", count: 4) + "GET / HTTP/1.1\r\nHost: a\r\n\r\n") == nil)
    }

    @Test("malformed request lines and fields are 400, other versions 505")
    func malformed() {
        for bad in [
            "GARBAGE\r\n\r\n", "GET  / HTTP/1.1\r\n\r\n", "GET / HTTP/1.1 extra\r\n\r\n", "G(T / HTTP/1.1\r\n\r\n",
            "GET / HTTX/1.1\r\n\r\n", "GET /\u{7f} HTTP/1.1\r\n\r\n", "GET / HTTP/1.1\r\nNoColon\r\n\r\n",
            "GET / HTTP/1.1\r\n: empty\r\n\r\n", "GET / HTTP/1.1\r\nBad Name: x\r\n\r\n",
            "GET / HTTP/1.1\r\nA: 1\r\n folded\r\n\r\n", "GET / HTTP/1.1\r\nA: nul\u{0}\r\n\r\n",
        ] {
            #expect(status(bad) == 400, "\(bad.debugDescription)")
        }
        #expect(status("GET / HTTP/2.0\r\n\r\n") == 505)
    }

    @Test("body length: absent 0, valid, conflicting or malformed 400, over the limit 413, chunked 411")
    func bodyLength() throws {
        func length(_ headers: String) -> Result<Int, HTTPParseError>? {
            guard case .complete(let h, _) = parse("POST / HTTP/1.1\r\n\(headers)\r\n") else { return nil }
            return requestBodyLength(h, limits: limits)
        }
        #expect(try length("")?.get() == 0)
        #expect(try length("Content-Length: 12\r\n")?.get() == 12)
        #expect(try length("Content-Length: 12\r\nContent-Length: 12\r\n")?.get() == 12)
        for bad in [
            "Content-Length: 12\r\nContent-Length: 13\r\n", "Content-Length: -1\r\n", "Content-Length: 1e3\r\n",
            "Content-Length: 99999999999999999999999\r\n", "Content-Length: \r\n",
        ] {
            guard case .failure(let e) = length(bad) else {
                Issue.record("accepted \(bad.debugDescription)")
                continue
            }
            #expect(e.status == 400, "\(bad.debugDescription)")
        }
        if case .failure(let e) = length("Content-Length: 4097\r\n") {
            #expect(e.status == 413)
        } else {
            Issue.record("4097 > 4096 accepted")
        }
        if case .failure(let e) = length("Transfer-Encoding: chunked\r\n") {
            #expect(e.status == 411)
        } else {
            Issue.record("chunked body accepted")
        }
    }

    @Test("fuzz: random bytes and mutated requests never crash; a complete head lies within the input and limits")
    func fuzz() {
        let valid = Array("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}".utf8)
        forAll(cases: 1500, seed: 0x5E4E) { rng, c in
            var bytes: [UInt8]
            if rng.bool(0.3) {
                bytes = (0..<rng.int(0...1500)).map { _ in UInt8(rng.int(0...255)) }
            } else {
                bytes = valid
                for _ in 0..<rng.int(1...6) {
                    let at = rng.int(0...bytes.count)
                    switch rng.int(0...3) {
                    case 0: bytes.insert(rng.pick(Array(" :\r\n\t\u{0}\u{7f}/aZ1".utf8)), at: at)
                    case 1: if at < bytes.count { bytes.remove(at: at) }
                    case 2: if at < bytes.count { bytes[at] = UInt8(rng.int(0...255)) }
                    default:
                        bytes.insert(contentsOf: Array(repeating: rng.pick(Array("a\r\n".utf8)), count: 600), at: at)
                    }
                }
            }
            switch parseRequestHead(bytes, limits: limits) {
            case .incomplete:
                #expect(bytes.count <= limits.maximumHeaderBytes + 8, c.label)
            case .complete(let head, let n):
                #expect(n <= bytes.count && n <= limits.maximumHeaderBytes + 8, c.label)
                #expect(head.headers.count <= limits.maximumHeaderCount, c.label)
                _ = requestBodyLength(head, limits: limits)
            case .failure(let e):
                #expect([400, 431, 505].contains(e.status), c.label)
            }
        }
    }

    @Test("server-sent events: one data line per line, blank line after")
    func sse() {
        #expect(serverSentEvent("{}") == "data: {}\n\n")
        #expect(serverSentEvent("a\nb") == "data: a\ndata: b\n\n")
    }

    @Test("API key: bearer scheme required, constant-time equality over different lengths")
    func apiKey() {
        #expect(bearerMatches("Bearer s3cret", key: "s3cret"))
        #expect(bearerMatches("bearer s3cret", key: "s3cret"))
        #expect(!bearerMatches("Bearer s3cre", key: "s3cret"))
        #expect(!bearerMatches("Bearer s3cret2", key: "s3cret"))
        #expect(!bearerMatches("Basic s3cret", key: "s3cret"))
        #expect(!bearerMatches(nil, key: "s3cret"))
        #expect(!constantTimeEqual([1, 2], [1, 2, 0]) && constantTimeEqual([], []))
    }
}
