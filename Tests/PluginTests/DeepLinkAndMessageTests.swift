import AbsherData
import Foundation
import SanadChat
import SanadCore
import SanadTestSupport
import Testing

func randomLink(_ rng: inout SeededGenerator) -> DeepLink {
    DeepLink(
        serviceType: rng.string(from: Alphabet.serviceType, length: 1...24),
        title: rng.bool(0.1) ? "" : rng.string(from: Alphabet.any, length: 1...40),
        alertId: rng.string(from: Alphabet.any, length: 1...16))
}

@Suite("Deep links")
struct DeepLinkTests {
    @Test("every link formats to an ASCII URL that parses back to the same link (200 cases)")
    func roundTrip() throws {
        try forAll { rng, c in
            let link = randomLink(&rng)
            let url = link.url(AbsherSettings.linkFormat)
            #expect(url.unicodeScalars.allSatisfy { $0.isASCII && $0.value > 0x20 }, c.label)
            #expect(url.hasPrefix("absher://service/\(link.serviceType)?alert="), c.label)
            let parsed = try DeepLink(url: url, format: AbsherSettings.linkFormat)
            #expect(parsed == link, c.label)
            #expect(parsed.url(AbsherSettings.linkFormat) == url, c.label)
        }
    }

    @Test(
        "the issue's URL form parses",
        arguments: [
            (
                "absher://service/driving_license_renewal?alert=dl-1",
                DeepLink(serviceType: "driving_license_renewal", title: "", alertId: "dl-1")
            ),
            (
                "absher://service/dependents?title=%D9%88%D9%84%D8%AF%D9%83&alert=dep-1",
                DeepLink(serviceType: "dependents", title: "ولدك", alertId: "dep-1")
            ),
        ])
    func parsesExamples(url: String, expected: DeepLink) throws {
        #expect(try DeepLink(url: url, format: AbsherSettings.linkFormat) == expected)
    }

    @Test(
        "invalid URLs throw an error naming the problem",
        arguments: [
            ("https://service/x?alert=1", "the scheme is 'https'"),
            ("absher://payment/x?alert=1", "the host must be 'service'"),
            ("absher://service/?alert=1", "the service type is missing"),
            ("absher://service/Driving?alert=1", "may only hold"),
            ("absher://service/x", "'alert' parameter is missing"),
            ("absher://service/x?alert=", "'alert' parameter is missing or empty"),
            ("absher://service/x?alert=1&alert=2", "'alert' is given twice"),
            ("absher://service/x?alert=1&color=red", "unknown parameter 'color'"),
            ("absher://service/x?alert=%E2%28", "not valid percent-encoding"),
            ("absher://service/x?alert=%4", "not valid percent-encoding"),
            ("absher://service/x?alert", "has no '='"),
            ("", "does not start with"),
        ])
    func invalid(url: String, problem: String) {
        #expect {
            _ = try DeepLink(url: url, format: AbsherSettings.linkFormat)
        } throws: { error in
            guard let e = error as? ChatError, case .invalidDeepLink = e else { return false }
            return e.description.contains(problem) && e.description.contains(AbsherSettings.linkFormat.pattern)
        }
    }

    @Test("mutated and random strings parse or throw invalidDeepLink, never anything else (300 cases)")
    func fuzz() {
        forAll(cases: 300) { rng, c in
            var text =
                rng.bool()
                ? randomLink(&rng).url(AbsherSettings.linkFormat) : rng.string(from: Alphabet.any, length: 0...60)
            for _ in 0..<rng.int(0...4) where !text.isEmpty {
                var chars = Array(text)
                let i = rng.int(0...(chars.count - 1))
                switch rng.int(0...2) {
                case 0: chars.remove(at: i)
                case 1: chars.insert(rng.pick(Alphabet.tricky + ["%", "&", "=", "?"]), at: i)
                default: chars[i] = rng.pick(Alphabet.any)
                }
                text = String(chars)
            }
            do {
                let link = try DeepLink(url: text, format: AbsherSettings.linkFormat)
                // Whatever parses is a valid link whose canonical URL parses to the same link.
                #expect(DeepLink.isValidServiceType(link.serviceType) && !link.alertId.isEmpty, c.label)
                #expect(
                    try DeepLink(url: link.url(AbsherSettings.linkFormat), format: AbsherSettings.linkFormat) == link,
                    c.label)
            } catch let error as ChatError {
                guard case .invalidDeepLink = error else {
                    Issue.record("unexpected \(error) for \(text.debugDescription) — \(c)")
                    return
                }
            } catch {
                Issue.record("unexpected \(error) for \(text.debugDescription) — \(c)")
            }
        }
    }
}

func randomEntry(_ rng: inout SeededGenerator) -> ChatEntry {
    var seconds = Double(rng.int(0...4_102_444_800))
    if rng.bool(0.2) { seconds += Double(rng.int(1...999)) / 1000 }
    return ChatEntry(
        id: rng.bool() ? UUID().uuidString : rng.string(from: Alphabet.any, length: 1...20),
        content: rng.string(from: Alphabet.any, length: 0...80), isUser: rng.bool(),
        timestamp: Date(timeIntervalSince1970: seconds), deepLink: rng.bool() ? randomLink(&rng) : nil,
        check: rng.bool(0.3)
            ? ReplyCheck(verified: rng.bool(), note: rng.string(from: Alphabet.any, length: 0...40)) : nil)
}

@Suite("Chat messages as JSON")
struct ChatEntryJSONTests {
    func encode(_ value: some Encodable) throws -> Data {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys]
        return try e.encode(value)
    }

    @Test("a message encodes to exactly the documented shape")
    func shape() throws {
        let entry = ChatEntry(
            id: "m1", content: "ولدك حسام باقي له 30 يوم على اصدار رخصة", isUser: false,
            timestamp: Date(timeIntervalSince1970: 1_795_327_200),
            deepLink: DeepLink(serviceType: "dependents", title: "ولدك حسام", alertId: "dep-1"))
        let text = String(decoding: try encode(entry), as: UTF8.self)
        #expect(
            text
                == #"{"content":"ولدك حسام باقي له 30 يوم على اصدار رخصة","deepLink":{"alertId":"dep-1","serviceType":"dependents","title":"ولدك حسام"},"id":"m1","isUser":false,"timestamp":"2026-11-22T06:00:00Z"}"#
        )
        let checked = ChatEntry(
            id: "m3", content: "نص", isUser: false, timestamp: Date(timeIntervalSince1970: 0),
            check: ReplyCheck(verified: false, note: "⚠ …"))
        #expect(
            String(decoding: try encode(checked), as: UTF8.self)
                == #"{"check":{"note":"⚠ …","verified":false},"content":"نص","id":"m3","isUser":false,"timestamp":"1970-01-01T00:00:00Z"}"#
        )
        let plain = ChatEntry(id: "m2", content: "hi", isUser: true, timestamp: Date(timeIntervalSince1970: 0))
        #expect(
            String(decoding: try encode(plain), as: UTF8.self)
                == #"{"content":"hi","id":"m2","isUser":true,"timestamp":"1970-01-01T00:00:00Z"}"#)
    }

    // Feature: absher-chat-plugins, Property 6: message JSON round-trips
    @Test("value → JSON → value is the same value, and JSON → value → JSON the same bytes (300 cases)")
    func roundTrip() throws {
        try forAll(cases: 300) { rng, c in
            let entries = (0..<rng.int(1...4)).map { _ in randomEntry(&rng) }
            let data = try encode(entries)
            let decoded = try JSONDecoder().decode([ChatEntry].self, from: data)
            #expect(decoded == entries, c.label)
            #expect(try encode(decoded) == data, c.label)
            let object = try #require(try JSONValue.parse(data).arrayValue?.first?.objectValue, c.label)
            var keys: Set<String> = ["id", "content", "isUser", "timestamp"]
            if entries[0].deepLink != nil { keys.insert("deepLink") }
            if entries[0].check != nil { keys.insert("check") }
            #expect(Set(object.keys) == keys, c.label)
            let stamp = try #require(object["timestamp"]?.stringValue, c.label)
            #expect(stamp.hasSuffix("Z") && stamp.count >= 20 && parseISO8601(stamp) == entries[0].timestamp, c.label)
            // The history file format is the same array.
            #expect(
                try ChatEntry.decodeHistory(try ChatEntry.encodeHistory(entries), file: "h.json") == entries, c.label)
        }
    }

    @Test("invalid history JSON names the file and the key")
    func invalidHistory() {
        let bad = Data(#"[{"id":"1","content":"x","isUser":true,"timestamp":"yesterday"}]"#.utf8)
        #expect {
            _ = try ChatEntry.decodeHistory(bad, file: "/tmp/h.json")
        } throws: { error in
            "\(error)".contains("/tmp/h.json") && "\(error)".contains("timestamp") && "\(error)".contains("ISO-8601")
        }
        let missing = Data(#"[{"id":"1","isUser":true,"timestamp":"2026-11-22T06:00:00Z"}]"#.utf8)
        #expect {
            _ = try ChatEntry.decodeHistory(missing, file: "/tmp/h.json")
        } throws: { error in
            "\(error)".contains("missing key 'content'")
        }
    }
}

@Suite("Numbers a person types, and links without an alert")
struct LocalizedNumberTests {
    @Test(
        "Western, Arabic-Indic and Extended Arabic-Indic digits read as the same number; anything else is not one",
        arguments: [
            ("2", 2), ("٢", 2), ("۲", 2), (" 12 ", 12), ("١٢", 12), ("۱۲", 12), ("0", 0), ("-1", nil), ("1.5", nil),
            ("two", nil), ("", nil), ("١٢٣٤٥٦٧٨٩٠", nil), ("2a", nil),
        ] as [(String, Int?)])
    func parse(text: String, expected: Int?) {
        #expect(parseLocalizedNumber(text) == expected, "\(text)")
    }

    @Test("numbers are written back in Arabic-Indic digits")
    func arabicDigits() {
        #expect(arabicIndicDigits(0) == "٠" && arabicIndicDigits(2026) == "٢٠٢٦")
    }

    @Test("the specification's \"alertId\": null reads as a link about no alert and writes back as null")
    func nullAlert() throws {
        let json = #"{"alertId":null,"serviceType":"dependents","title":"التابعين"}"#
        let link = try JSONDecoder().decode(DeepLink.self, from: Data(json.utf8))
        #expect(link == DeepLink(serviceType: "dependents", title: "التابعين", alertId: ""))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        #expect(String(decoding: try encoder.encode(link), as: UTF8.self) == json)
        let missing = try JSONDecoder().decode(
            DeepLink.self, from: Data(#"{"serviceType":"dependents","title":"t"}"#.utf8))
        #expect(missing.alertId.isEmpty)
    }
}
