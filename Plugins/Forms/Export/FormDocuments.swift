import Foundation
import SanadCore

/// What an export writes for one session: `answers.json` (answers with evidence, fees, checklist), `form.txt`,
/// `checklist.txt`, `form.pdf` and `checklist.pdf` in the session's language (labels, checklist and the document's
/// own words), `form-en.pdf` (the official form's language, English) when the session is in another language and
/// the template has English, and `reminder-FIELD.ics` for each answered date the template asks a reminder for.
public struct FormDocuments: Sendable {
    public var files: [(name: String, bytes: [UInt8])]
    /// What the person should know about the files: characters a PDF could not show, and, once, why the PDFs fell
    /// back to Courier (even when nothing was lost, so a missing HarfBuzz or font is never silent).
    public var notes: [String]

    public init(_ session: FormSession, fonts: TextPDF.Fonts = .system) {
        let review = FormReview(session)
        let lines = DocumentLines(review)
        files = [
            ("answers.json", Array((review.json.prettyString + "\n").utf8)),
            ("form.txt", Array(plainText(lines.form).utf8)), ("checklist.txt", Array(plainText(lines.checklist).utf8)),
        ]
        var pdfs = [("form.pdf", review, lines.form), ("checklist.pdf", review, lines.checklist)]
        if review.language != "en", let english = session.shown(in: "en").map(FormReview.init) {
            pdfs.append(("form-en.pdf", english, DocumentLines(english).form))
        }
        notes = []
        var fallback: String?
        for (name, review, lines) in pdfs {
            let pdf = TextPDF(title: review.title, lines: lines, language: review.language).render(fonts: fonts)
            files.append((name, pdf.bytes))
            fallback = fallback ?? pdf.note
            guard pdf.unrepresentable > 0 else { continue }
            let full = ["form.pdf": "form.txt", "checklist.pdf": "checklist.txt"][name] ?? "answers.json"
            let how = pdf.note == nil ? "have no glyph in the embedded font" : "are outside Courier and shown as '?'"
            notes.append("\(name): \(pdf.unrepresentable) character(s) \(how); \(full) has the full text")
        }
        if let fallback { notes.append(fallback) }
        let answers = session.storedAnswers
        for reminder in session.template.review.reminders {
            guard let value = answers[reminder.field], let date = CivilDate(iso: value) else { continue }
            let event = ICalendarReminder(
                uid: "\(session.id)-\(reminder.field)@sanad", date: date,
                summary: reminder.title.text(session.language),
                description: reminder.description.text(session.language), alarmDaysBefore: reminder.alarmDaysBefore)
            files.append(("reminder-\(reminder.field).ics", Array(event.render(stamp: session.now()).utf8)))
        }
    }
}
