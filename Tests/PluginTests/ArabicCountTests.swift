import AbsherData
import Testing

/// Day counts in Arabic take the noun form their number requires (issue 25 item 3).
@Suite("Arabic day counts")
struct ArabicCountTests {
    @Test(
        "يوم واحد، يومان، 3–10 أيام، 11–99 يوماً، مئة يوم",
        arguments: [
            (1, "يوم واحد"), (2, "يومان"), (3, "3 أيام"), (10, "10 أيام"), (11, "11 يوماً"), (45, "45 يوماً"),
            (99, "99 يوماً"), (100, "100 يوم"), (101, "101 يوم"), (102, "102 يوم"), (103, "103 أيام"),
            (111, "111 يوماً"), (200, "200 يوم"), (-5, "-5 أيام"),
        ])
    func days(count: Int, text: String) {
        #expect(arabicDays(count) == text)
    }

    @Test(
        "ثانية واحدة، ثانيتان، 3 ثوانٍ، 45 ثانيةً، 100 ثانية",
        arguments: [
            (1, "ثانية واحدة"), (2, "ثانيتان"), (3, "3 ثوانٍ"), (45, "45 ثانيةً"), (100, "100 ثانية"), (120, "120 ثانيةً"),
        ])
    func seconds(count: Int, text: String) {
        #expect(arabicCount(count, .second) == text)
    }

    @Test(
        "سجل واحد، سجلان، 3 سجلات، 11 سجلاً؛ 1 day, 2 days",
        arguments: [
            (1, "سجل واحد", "1 record"), (2, "سجلان", "2 records"), (3, "3 سجلات", "3 records"),
            (11, "11 سجلاً", "11 records"), (100, "100 سجل", "100 records"), (0, "0 سجل", "0 records"),
        ])
    func records(count: Int, arabic: String, english: String) {
        #expect(arabicCount(count, .record) == arabic && englishCount(count, .record) == english)
    }

    @Test(
        "after a preposition only the dual changes: منذ يومين، أكثر من ثانيتين، منذ 3 أيام",
        arguments: [(1, "يوم واحد"), (2, "يومين"), (3, "3 أيام"), (45, "45 يوماً"), (102, "102 يوم")])
    func genitive(count: Int, text: String) {
        #expect(arabicDays(count, genitive: true) == text)
        #expect(AbsherSettings.wording.replyTimedOut(2) == "⚠ تأخر الرد أكثر من ثانيتين فأوقفه سند.")
    }
}
