import Foundation
import SanadCore
import Testing

@Suite("Strict JSON reader")
struct StrictJSONTests {
    func problem(_ text: String, _ reader: StrictJSON = StrictJSON()) -> SanadError? {
        do {
            _ = try reader.parse(Array(text.utf8))
            return nil
        } catch let error as SanadError {
            return error
        } catch {
            return .engine("unexpected \(error)")
        }
    }

    @Test("well-formed documents parse to the same values as JSONDecoder")
    func accepts() throws {
        let text = #"{"a": [1, -2.5e3, true, false, null], "b": {"c": "x\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"}, "d": []}"#
        let strict = try StrictJSON().parse(Array(text.utf8))
        #expect(strict == (try JSONValue.parse(text)))
        #expect(try StrictJSON().parse(Array(" 0 ".utf8)) == .number(0))
    }

    @Test(
        "each violation is refused with its line and column",
        arguments: [
            ("{\"a\": 1,\n}", 2, 1, "trailing comma before '}'"),
            ("[1, 2,]", 1, 7, "trailing comma before ']'"),
            ("{\"a\": 1,\n \"a\": 2}", 2, 2, "duplicate key 'a'"),
            ("{\"a\": 01}", 1, 7, "leading zeros"),
            ("{\"a\": 1e999}", 1, 7, "out of range"),
            ("{\"a\": 1} x", 1, 10, "after the document's end"),
            ("{'a': 1}", 1, 2, "expected a key in double quotes"),
            ("{\"a\": \"\u{1}\"}", 1, 8, "control character"),
            ("{\"a\": \"\\ud800\"}", 1, 8, "lone high surrogate"),
            ("{\"é\": tru}", 1, 7, "expected a value"),
        ])
    func refuses(text: String, line: Int, column: Int, words: String) {
        guard case .invalidJSON(let l, let c, let p) = problem(text) else {
            Issue.record("not refused: \(text)")
            return
        }
        #expect(l == line && c == column, "\(text): at \(l):\(c)")
        #expect(p.contains(words), "\(text): \(p)")
    }

    @Test("invalid UTF-8 is refused where it is, not as a type mismatch")
    func invalidUTF8() {
        for bytes: [UInt8] in [
            [0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D], [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22],
        ] {
            #expect(throws: SanadError.self) { _ = try StrictJSON().parse(bytes) }
            if case .invalidJSON(_, _, let p) = problem(String(decoding: bytes, as: UTF8.self)) {
                #expect(!p.isEmpty)
            }
            do {
                _ = try StrictJSON().parse(bytes)
            } catch {
                #expect("\(error)".contains("UTF-8"), "\(bytes): \(error)")
            }
        }
    }

    @Test("nesting and size limits")
    func limits() {
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        guard case .invalidJSON(_, _, let p) = problem(deep) else {
            Issue.record("deep nesting accepted")
            return
        }
        #expect(p.contains("nested deeper than 64"))
        #expect(problem(String(repeating: "[", count: 64) + String(repeating: "]", count: 64)) == nil)
        guard case .invalidJSON(_, _, let size) = problem("[1, 2, 3]", StrictJSON(maximumBytes: 4)) else {
            Issue.record("size limit not applied")
            return
        }
        #expect(size.contains("at most 4"))
    }
}
