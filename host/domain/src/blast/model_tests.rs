//! State transitions of jobs and recipients.

use super::*;

fn job(max_attempts: u32) -> BlastJob {
    BlastJob {
        id: "j".into(),
        seq: 1,
        session_id: "s".into(),
        account: "1555@s.whatsapp.net".into(),
        endpoint: "text".into(),
        status: JobStatus::Pending,
        options: BlastOptions {
            max_attempts,
            ..BlastOptions::default()
        },
        total: 1,
        sent_count: 0,
        failed_count: 0,
        dlq_count: 0,
        skipped_dup_count: 0,
        send_at: None,
        created_at: 10,
        started_at: None,
        finished_at: None,
        in_flight: None,
        reason: None,
    }
}

fn recipient() -> BlastRecipient {
    BlastRecipient {
        id: 1,
        recipient: "15550001@s.whatsapp.net".into(),
        status: RecipientStatus::Pending,
        attempts: 0,
        last_error: None,
        message_id: None,
        updated_at: 10,
        held_until: None,
    }
}

fn failed() -> SendOutcome {
    SendOutcome::Failed {
        error: "boom".into(),
    }
}

#[test]
fn statuses_round_trip_through_their_wire_spellings() {
    for s in JobStatus::ALL {
        assert_eq!(JobStatus::parse(s.as_str()), Some(*s));
        assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
    }
    for s in RecipientStatus::ALL {
        assert_eq!(RecipientStatus::parse(s.as_str()), Some(*s));
        assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
    }
    assert_eq!(JobStatus::parse("done"), None);
    assert!(JobStatus::names().contains("completed_with_failures"));
}

#[test]
fn a_claim_starts_a_pending_job_once_and_keeps_the_first_start_time() {
    let mut j = job(3);
    assert!(j.claim(20));
    assert_eq!((j.status, j.started_at), (JobStatus::Running, Some(20)));
    assert!(!j.claim(30), "a running job is not claimed again");
    j.status = JobStatus::Pending;
    assert!(j.claim(40));
    assert_eq!(j.started_at, Some(20));
}

#[test]
fn a_failed_attempt_returns_the_recipient_to_pending_until_the_last_which_dead_letters_it() {
    let mut j = job(2);
    let mut r = recipient();
    assert!(r.begin(11, || "ID1".into()));
    j.in_flight = Some(1);
    j.apply(&mut r, &failed(), 12);
    assert_eq!((r.status, r.attempts), (RecipientStatus::Pending, 1));
    assert_eq!((j.failed_count, j.dlq_count, j.in_flight), (1, 0, None));
    assert!(r.begin(13, || "ID2".into()));
    assert_eq!(r.message_id.as_deref(), Some("ID1"), "the id is kept");
    j.apply(&mut r, &failed(), 14);
    assert_eq!((r.status, r.attempts), (RecipientStatus::Dlq, 2));
    assert_eq!((j.failed_count, j.dlq_count), (2, 1));
    assert_eq!(r.last_error.as_deref(), Some("boom"));
    assert!(!r.begin(15, || "ID3".into()), "dlq is never sent again");
}

#[test]
fn a_success_counts_once_and_keeps_the_message_id() {
    let mut j = job(3);
    let mut r = recipient();
    r.begin(11, || "ID1".into());
    j.apply(
        &mut r,
        &SendOutcome::Sent {
            message_id: "ID1".into(),
        },
        12,
    );
    assert_eq!((r.status, r.attempts), (RecipientStatus::Sent, 1));
    assert_eq!(j.sent_count, 1);
    assert_eq!(r.updated_at, 12);
}

#[test]
fn an_unattempted_send_costs_no_attempt() {
    let mut j = job(1);
    let mut r = recipient();
    r.begin(11, || "ID1".into());
    j.apply(&mut r, &SendOutcome::NotAttempted, 12);
    assert_eq!((r.status, r.attempts), (RecipientStatus::Pending, 0));
    assert_eq!((j.failed_count, j.dlq_count), (0, 0));
}

#[test]
fn closing_picks_completed_or_completed_with_failures_by_the_dlq() {
    let mut j = job(3);
    assert!(!j.close(5), "only a running job closes");
    j.claim(1);
    assert!(j.close(5));
    assert_eq!((j.status, j.finished_at), (JobStatus::Completed, Some(5)));
    let mut j = job(3);
    j.claim(1);
    j.dlq_count = 1;
    j.close(5);
    assert_eq!(j.status, JobStatus::CompletedWithFailures);
}

#[test]
fn cancel_is_refused_once_terminal_and_a_cancelled_job_does_not_close() {
    let mut j = job(3);
    j.claim(1);
    j.cancel(2).unwrap();
    assert_eq!(j.status, JobStatus::Cancelled);
    assert_eq!(
        j.cancel(3),
        Err(Refusal::NotCancellable(JobStatus::Cancelled))
    );
    assert!(!j.close(4));
    assert!(!j.fail("x", 4));
    for s in [
        JobStatus::Completed,
        JobStatus::CompletedWithFailures,
        JobStatus::Failed,
    ] {
        let mut j = job(3);
        j.status = s;
        assert!(j.cancel(1).is_err());
    }
}

#[test]
fn retry_is_refused_while_running_or_with_nothing_dead_lettered_and_reopens_as_pending() {
    let mut j = job(3);
    j.claim(1);
    assert_eq!(j.check_retry(3), Err(Refusal::Running));
    j.dlq_count = 2;
    j.close(5);
    assert_eq!(j.check_retry(0), Err(Refusal::NothingToRetry));
    assert_eq!(j.check_retry(2), Ok(()));
    j.reopen();
    assert_eq!(j.status, JobStatus::Pending);
    assert_eq!((j.dlq_count, j.finished_at), (0, None));
    assert_eq!(j.started_at, Some(1));
}

#[test]
fn a_reopened_recipient_gets_fresh_attempts_and_keeps_its_message_id() {
    let mut r = recipient();
    r.status = RecipientStatus::Dlq;
    r.attempts = 3;
    r.message_id = Some("ID".into());
    assert!(r.reopen(20));
    assert_eq!((r.status, r.attempts), (RecipientStatus::Pending, 0));
    assert_eq!(r.message_id.as_deref(), Some("ID"));
    let mut sent = recipient();
    sent.status = RecipientStatus::Sent;
    assert!(!sent.reopen(20), "a sent recipient stays sent");
}

#[test]
fn failing_records_the_reason_and_the_completed_event_carries_it() {
    let mut j = job(3);
    assert!(j.fail("the session was logged out", 9));
    let data = j.event_data(true);
    assert_eq!(data.status, JobStatus::Failed);
    assert_eq!(data.job_id, "j");
    let completion = data
        .completion
        .expect("a completed event says how it ended");
    assert_eq!(
        completion.reason.as_deref(),
        Some("the session was logged out")
    );
}

#[test]
fn a_progress_event_has_no_completion_fields_and_a_completed_one_has_them_all() {
    let j = job(3);
    let progress = serde_json::to_value(j.event_data(false)).unwrap();
    for key in ["started_at", "finished_at", "reason"] {
        assert!(progress.get(key).is_none(), "{key} in {progress}");
    }
    let completed = serde_json::to_value(j.event_data(true)).unwrap();
    for key in ["started_at", "finished_at", "reason"] {
        assert!(
            completed.get(key).is_some(),
            "{key} missing from {completed}"
        );
    }
    assert!(completed["reason"].is_null());
    assert_eq!(completed["status"], progress["status"]);
}

#[test]
fn a_refused_send_is_dead_lettered_at_once_whatever_attempts_are_left() {
    let mut j = job(5);
    let mut r = recipient();
    j.apply(
        &mut r,
        &SendOutcome::Refused {
            error: "plugin `footer`: banned word".into(),
        },
        11,
    );
    assert_eq!((r.status, r.attempts), (RecipientStatus::Dlq, 1));
    assert_eq!((j.failed_count, j.dlq_count), (1, 1));
    assert_eq!(
        r.last_error.as_deref(),
        Some("plugin `footer`: banned word")
    );
}
