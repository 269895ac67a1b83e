import CreditScoringPlugin
import Foundation
import Testing

@Suite("credit input formats")
struct MessageInputTests {
    func read(_ text: String, skipBad: Bool = false, dateOrder: DateOrder = .dmy) throws -> ([Message], ReadSummary) {
        let url = try CreditFixtures.file(text)
        var messages: [Message] = []
        let summary = try MessageReader.read(
            path: url.path, settings: ReaderSettings(dateOrder: dateOrder, skipBad: skipBad)
        ) { messages.append($0) }
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
