//! Answers handed to the POST that carried their request: on SSE, a POST asking with
//! [`super::INLINE_ANSWER_HEADER`] waits a short bound for its answer (one write instead of a 202
//! and a stream event), else the answer goes on the stream; Streamable HTTP's POSTs wait here
//! unbounded. One path carries each answer (whoever takes the waiter out of the book); a
//! cancelled request has none. It keeps the book; it must not parse messages or decide which
//! requests may be answered inline.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::oneshot;

/// The POSTs waiting for their answers, by their request's id key.
#[derive(Debug, Default)]
pub struct WaitingPosts {
    waiting: Arc<Mutex<HashMap<String, oneshot::Sender<Delivery>>>>,
}

/// What reaches a waiting POST.
#[derive(Debug, PartialEq, Eq)]
pub enum Delivery {
    /// Its request's answer, one line.
    Answer(String),
    /// Its request was cancelled: no answer will ever come.
    Withdrawn,
}

/// How a POST's wait for its answer ended, with no bound on it.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    Answer(String),
    /// The request was cancelled and is never answered.
    Withdrawn,
    /// The session went away without an answer.
    Gone,
}

impl WaitingPosts {
    /// Registers a POST waiting for the answer to request `key`; `None` when another POST
    /// already waits for that key (that answer stays on the stream).
    pub fn register(&self, key: String) -> Option<AnswerWaiter> {
        let (tx, rx) = oneshot::channel();
        let mut waiting = lock(&self.waiting);
        if waiting.contains_key(&key) {
            return None;
        }
        waiting.insert(key.clone(), tx);
        Some(AnswerWaiter {
            waiting: self.waiting.clone(),
            key,
            rx,
        })
    }

    /// Whether no POST is waiting.
    pub fn is_empty(&self) -> bool {
        lock(&self.waiting).is_empty()
    }

    /// Hands `line`, the answer to request `key`, to the POST waiting for it; gives the line back
    /// when none waits (or it has just given up), so it goes on the stream.
    pub fn hand_over(&self, key: &str, line: String) -> Result<(), String> {
        let waiter = lock(&self.waiting).remove(key);
        match waiter {
            Some(post) => post
                .send(Delivery::Answer(line))
                .map_err(|back| back.into_line().unwrap_or_default()),
            None => Err(line),
        }
    }

    /// Releases the POST waiting for request `key`, which will never be answered (its client
    /// cancelled it); a POST that is not waiting is left alone.
    pub fn withdraw(&self, key: &str) {
        if let Some(post) = lock(&self.waiting).remove(key) {
            let _ = post.send(Delivery::Withdrawn);
        }
    }
}

/// One POST's claim on its request's answer; dropping it withdraws the claim.
#[derive(Debug)]
pub struct AnswerWaiter {
    waiting: Arc<Mutex<HashMap<String, oneshot::Sender<Delivery>>>>,
    key: String,
    rx: oneshot::Receiver<Delivery>,
}

impl AnswerWaiter {
    /// The answer, if it comes within `bound` (zero: only an answer already given); `None`
    /// means it will go on the stream, or never comes (the request was cancelled).
    pub async fn within(mut self, bound: Duration) -> Option<String> {
        let arrived = if bound.is_zero() {
            self.rx.try_recv().ok()
        } else {
            tokio::time::timeout(bound, &mut self.rx)
                .await
                .ok()
                .and_then(Result::ok)
        };
        if let Some(delivery) = arrived {
            return delivery.into_line();
        }
        // Giving up: if the answer took the claim first, it is already on its way here.
        if lock(&self.waiting).remove(&self.key).is_some() {
            return None;
        }
        (&mut self.rx).await.ok().and_then(Delivery::into_line)
    }

    /// How the wait ends, however long it takes.
    pub async fn answer(mut self) -> Outcome {
        match (&mut self.rx).await {
            Ok(Delivery::Answer(line)) => Outcome::Answer(line),
            Ok(Delivery::Withdrawn) => Outcome::Withdrawn,
            Err(_) => Outcome::Gone,
        }
    }
}

impl Delivery {
    fn into_line(self) -> Option<String> {
        match self {
            Delivery::Answer(line) => Some(line),
            Delivery::Withdrawn => None,
        }
    }
}

impl Drop for AnswerWaiter {
    fn drop(&mut self) {
        self.rx.close();
        let mut waiting = lock(&self.waiting);
        // Only this claim's own entry: its sender shows closed now that its receiver is.
        if waiting.get(&self.key).is_some_and(|tx| tx.is_closed()) {
            waiting.remove(&self.key);
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_answer_in_time_goes_to_the_post() {
        let book = WaitingPosts::default();
        let waiter = book.register("1".into()).unwrap();
        assert_eq!(book.hand_over("1", "answer".into()), Ok(()));
        assert_eq!(
            waiter.within(Duration::from_secs(60)).await.as_deref(),
            Some("answer")
        );
    }

    #[tokio::test]
    async fn an_answer_after_the_post_gave_up_goes_on_the_stream() {
        let book = WaitingPosts::default();
        let waiter = book.register("1".into()).unwrap();
        assert_eq!(waiter.within(Duration::ZERO).await, None);
        assert_eq!(book.hand_over("1", "late".into()), Err("late".into()));
    }

    #[tokio::test]
    async fn a_post_dropped_while_waiting_leaves_its_answer_to_the_stream() {
        let book = WaitingPosts::default();
        drop(book.register("1".into()).unwrap());
        assert_eq!(book.hand_over("1", "orphan".into()), Err("orphan".into()));
        assert!(lock(&book.waiting).is_empty());
    }

    #[tokio::test]
    async fn one_claim_per_request_id() {
        let book = WaitingPosts::default();
        let first = book.register("7".into()).unwrap();
        assert!(book.register("7".into()).is_none());
        assert_eq!(book.hand_over("7", "one".into()), Ok(()));
        assert_eq!(
            first.within(Duration::from_secs(60)).await.as_deref(),
            Some("one")
        );
    }

    #[tokio::test]
    async fn a_withdrawn_request_releases_its_post_with_no_answer() {
        let book = WaitingPosts::default();
        let waiter = book.register("1".into()).unwrap();
        book.withdraw("1");
        assert_eq!(waiter.answer().await, Outcome::Withdrawn);
        let bounded = book.register("2".into()).unwrap();
        book.withdraw("2");
        assert_eq!(bounded.within(Duration::from_secs(60)).await, None);
        // Control: a request still owed an answer gets it.
        let owed = book.register("3".into()).unwrap();
        book.withdraw("4");
        assert_eq!(book.hand_over("3", "line".into()), Ok(()));
        assert_eq!(owed.answer().await, Outcome::Answer("line".into()));
        assert!(lock(&book.waiting).is_empty());
    }

    #[tokio::test]
    async fn no_answers_without_a_claim() {
        let book = WaitingPosts::default();
        assert_eq!(book.hand_over("1", "line".into()), Err("line".into()));
    }
}
