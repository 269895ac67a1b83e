import Foundation
import SanadCore

/// What an export writes for one session: `answers.json` (answers with evidence, fees, checklist), `form.txt` and
/// `checklist.txt` in the session's language, `form.pdf` and `checklist.pdf` (the official form's language, English,
/// where the template has it: the PDF's standard font is Latin), and `reminder-FIELD.ics` for each answered date the
/// template asks a reminder for.
public struct FormDocuments: Sendable {
    public var files: [(name: String, bytes: [UInt8])]
    /// What the person should know about the files (characters a PDF could not show).
    public var notes: [String]

    public init(_ session: FormSession) {
        let review = FormReview(session)
        let official = session.shown(in: "en").map(FormReview.init) ?? review
        files = [
            ("answers.json", Array((review.json.prettyString + "\n").utf8)),
            ("form.txt", Array(review.documentText.utf8)), ("checklist.txt", Array(review.checklistText.utf8)),
        ]
        notes = []
        for (name, lines) in [("form.pdf", official.documentLines), ("checklist.pdf", official.checklistLines)] {
            let (bytes, lost) = TextPDF(title: official.title, lines: lines).render()
            files.append((name, bytes))
            if lost > 0 {
                notes.append(
                    "\(name): \(lost) character(s) outside the PDF's Latin font are shown as '?'; "
                        + "\(name.replacingOccurrences(of: ".pdf", with: ".txt")) has the full text")
            }
        }
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
