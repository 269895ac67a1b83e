import CreditScoringPlugin
import Foundation
import Testing

@Suite("credit input formats")
struct MessageInputTests {
    func read(_ text: String, skipBad: Bool = false, dateOrder: DateOrder = .dmy, me: [String]? = nil) throws -> (
        [Message], ReadSummary
    ) {
        let url = try CreditFixtures.file(text)
        var messages: [Message] = []
        var settings = ReaderSettings(dateOrder: dateOrder, skipBad: skipBad)
        if let me { settings.me = me }
        let summary = try MessageReader.read(path: url.path, settings: settings) { messages.append($0) }
        return (messages, summary)
    }

    @Test func plainLines() throws {
        let (m, s) = try read("2024-03-01T10:15 | Mom | hi | there\n2024-03-01 10:16:30Z | me | ok\n")
        #expect(s.format == "plain" && s.messages == 2)
        #expect(m[0].id == "L1" && m[0].sender == "Mom" && m[0].text == "hi | there" && !m[0].isFromMe)
        #expect(m[0].date == 1_709_288_100)
        #expect(m[1].isFromMe && m[1].chat == "Mom" && m[1].date == 1_709_288_100 + 90)
    }

    @Test func whatsappFormats() throws {
        let ios = "\u{200E}[01/03/2024, 10:15:00] Sara: Hello\nsecond line\n[01/03/2024, 10:16:00] Me: hi\n"
        let (m, s) = try read(ios)
        #expect(s.format == "whatsapp-ios" && m.count == 2 && s.continuationLines == 1)
        #expect(m[0].text == "Hello\nsecond line" && m[0].date == 1_709_288_100)
        #expect(m[1].isFromMe && m[1].chat == "Sara")
        let android = "01/03/2024, 10:15 - Messages are end-to-end encrypted\n3/1/24, 1:15 PM - Sara: hi\n"
        let (a, sa) = try read(android, dateOrder: .mdy)
        #expect(sa.format == "whatsapp-android" && sa.notices == 1 && a.count == 1)
        #expect(a[0].date == 1_709_298_900)
    }

    @Test func jsonArray() throws {
        let json = """
            [
              {"id": "a1", "date": "2024-03-01T10:15:00+03:00", "sender": "Mom", "isFromMe": false, "chat": "Mom",
               "text": "hi {not a brace} \\"x\\""},
              {"id": 7, "date": "2024-03-01T10:16:00Z", "sender": "me", "isFromMe": true, "chat": "Mom", "text": "ok"}
            ]
            """
        let (m, s) = try read(json)
        #expect(s.format == "json" && m.count == 2)
        #expect(m[0].id == "a1" && m[0].date == 1_709_288_100 - 3 * 3600 && m[0].text == "hi {not a brace} \"x\"")
        #expect(m[1].id == "7" && m[1].isFromMe && m[1].line == 4)
    }

    @Test("Telegram's JSON export: the exporting user is me, text parts joined, service messages are notices")
    func telegramExport() throws {
        let export = """
            {
              "about": "Here is the data you requested.",
              "personal_information": {"user_id": 4242, "first_name": "Noor"},
              "chats": {"about": "chats", "list": [
                {"name": "Mom", "type": "personal_chat", "id": 77, "messages": [
                  {"id": 1, "type": "service", "date": "2024-03-01T10:00:00", "action": "phone_call"},
                  {"id": 2, "type": "message", "date": "2024-03-01T10:15:00", "date_unixtime": "1709288100",
                   "from": "Mom", "from_id": "user9", "text": "Good morning habibi"},
                  {"id": 3, "type": "message", "date": "2024-03-01T10:16:00", "from": "Noor", "from_id": "user4242",
                   "text": ["I ", {"type": "bold", "text": "paid"}, " the rent"]}
                ]},
                {"name": "Ali", "type": "personal_chat", "id": 78, "messages": [
                  {"id": 1, "type": "message", "date": "2024-03-02T09:00:00", "from": "Ali", "from_id": "user5",
                   "text": "can you lend me 200?"}
                ]}
              ]}
            }
            """
        let (m, s) = try read(export)
        #expect(s.format == "telegram" && s.messages == 3 && s.notices == 1, "\(s)")
        #expect(m.map(\.id) == ["77/2", "77/3", "78/1"])
        #expect(m[0].date == 1_709_288_100 && !m[0].isFromMe && m[0].contact == "Mom")
        #expect(m[1].isFromMe && m[1].text == "I paid the rent" && m[1].contact == "Mom")
        #expect(m[2].date == 1_709_370_000 && m[2].contact == "Ali")
        // A one-chat export has no exporting user: --me names it.
        let one = """
            {"name": "Mom", "type": "personal_chat", "id": 77, "messages": [
              {"id": 5, "type": "message", "date": "2024-03-01T10:16:00", "from": "Noor", "text": "ok"}]}
            """
        let (single, _) = try read(one, me: ["noor"])
        #expect(single.first?.isFromMe == true)
        #expect(throws: CreditError.self) { try read("{\"chats\": 5}") }
    }

    @Test func malformedIsRefusedWithItsLine() throws {
        let bad = "2024-03-01T10:15 | Mom | hi\nnot a message\n2024-13-01T10:15 | Mom | x\n"
        #expect(
            throws: CreditError.malformedInput(
                line: 2,
                reason: "not a message line (expected 'YYYY-MM-DDTHH:MM | SENDER | TEXT' or a chat export line)")
        ) {
            try read(bad)
        }
        let (m, s) = try read(bad, skipBad: true)
        #expect(m.count == 1 && s.skipped == 2 && s.problems.map(\.line) == [2, 3])
        let json =
            "[{\"id\":1,\"date\":\"2024-03-01T10:15:00Z\",\"sender\":\"a\",\"isFromMe\":false,\"text\":\"x\"},\n42,\n{\"id\":2}]"
        let (j, js) = try read(json, skipBad: true)
        #expect(j.count == 1 && js.skipped == 2 && js.problems.map(\.line) == [2, 3])
        #expect(throws: CreditError.self) { try read("[{\"id\":1}") }
    }

    @Test func arabicNormalisationFindsLexiconWords() throws {
        let url = try CreditFixtures.file("2024-03-05T08:30 | me | سأسدد القرض والإيجار بكرة\n")
        let r = try CreditAnalysis.run(path: url.path, settings: AnalysisSettings())
        #expect(r.counts["financialWords"] == 2)
        #expect(r.counts["promiseWords"] == 2)
    }
}
