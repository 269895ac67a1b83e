/// The lines of the exported form and checklist in the session's language: the template gives the labels, steps,
/// answers and checklist items in it, and the few words the document adds itself (session, not answered, fees,
/// total, problems, checklist) come from `DocumentWords`.
struct DocumentLines {
    var form: [TextPDF.Line]
    var checklist: [TextPDF.Line]

    init(_ review: FormReview) {
        let words = DocumentWords(review.language)
        form = [
            .init(.title, review.title),
            .init(.body, "\(words.session): \(review.sessionID)\(review.complete ? "" : "  (\(words.incomplete))")"),
            .init(.body, ""),
        ]
        var lastStep = ""
        for e in review.entries {
            if e.stepTitle != lastStep {
                if !lastStep.isEmpty { form.append(.init(.body, "")) }
                form.append(.init(.heading, e.stepTitle))
                lastStep = e.stepTitle
            }
            form.append(.init(.body, "\(e.label): \(e.shown ?? "(\(words.notAnswered))")"))
        }
        if !review.fees.isEmpty, let currency = review.currency {
            form += [.init(.body, ""), .init(.heading, "\(words.fees) (\(currency))")]
            form += review.fees.map {
                .init(.body, "\($0.label): \($0.amount.map(FormReview.money) ?? review.unknownWord)")
            }
            let unknown = review.hasUnknownFees ? " + \(review.unknownWord)" : ""
            form.append(.init(.body, "\(words.total): \(FormReview.money(review.feeTotal))\(unknown)"))
        }
        if !review.problems.isEmpty {
            form +=
                [.init(.body, ""), .init(.heading, words.problems)] + review.problems.map { .init(.body, "! \($0)") }
        }
        checklist = [.init(.title, "\(review.title) — \(words.checklist)"), .init(.body, "")]
        for list in review.checklist {
            checklist.append(.init(.heading, list.title))
            checklist += list.items.map { .init(.body, "[ ] \($0)") }
            checklist.append(.init(.body, ""))
        }
        checklist.append(.init(.body, review.guidance))
    }
}

/// The words an exported document adds to the template's own text, in English, Arabic or Spanish (English for any
/// other language).
struct DocumentWords {
    var session, incomplete, notAnswered, fees, total, problems, checklist: String

    init(_ language: String) {
        switch language {
        case "ar":
            (session, incomplete, notAnswered) = ("الجلسة", "غير مكتملة", "لم يُجب عنه")
            (fees, total, problems, checklist) = ("الرسوم", "المجموع", "مشكلات", "قائمة التحقق")
        case "es":
            (session, incomplete, notAnswered) = ("Sesión", "INCOMPLETA", "sin responder")
            (fees, total, problems, checklist) = ("Tasas", "Total", "Problemas", "lista de comprobación")
        default:
            (session, incomplete, notAnswered) = ("Session", "INCOMPLETE", "not answered")
            (fees, total, problems, checklist) = ("Fees", "Total", "Problems", "checklist")
        }
    }
}
