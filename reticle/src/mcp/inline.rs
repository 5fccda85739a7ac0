//! Answers handed to the POST that carried their request: on SSE, a POST asking with
//! [`super::INLINE_ANSWER_HEADER`] waits a short bound for its answer (one write instead of a 202
//! and a stream event), else the answer goes on the stream; Streamable HTTP's POSTs wait here
//! unbounded. Exactly one path carries each answer: whoever takes the waiter out of the book.
//!
//! It keeps the book; it must not parse messages or decide which requests may be answered inline.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::oneshot;

/// The POSTs waiting for their answers, by their request's id key.
#[derive(Debug, Default)]
pub struct WaitingPosts {
    waiting: Arc<Mutex<HashMap<String, oneshot::Sender<String>>>>,
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
            Some(post) => post.send(line),
            None => Err(line),
        }
    }
}

/// One POST's claim on its request's answer; dropping it withdraws the claim.
#[derive(Debug)]
pub struct AnswerWaiter {
    waiting: Arc<Mutex<HashMap<String, oneshot::Sender<String>>>>,
    key: String,
    rx: oneshot::Receiver<String>,
}

impl AnswerWaiter {
    /// The answer, if it comes within `bound` (zero: only an answer already given); `None`
    /// means it will go on the stream.
    pub async fn within(mut self, bound: Duration) -> Option<String> {
        let arrived = if bound.is_zero() {
            self.rx.try_recv().ok()
        } else {
            tokio::time::timeout(bound, &mut self.rx)
                .await
                .ok()
                .and_then(Result::ok)
        };
        if arrived.is_some() {
            return arrived;
        }
        // Giving up: if the answer took the claim first, it is already on its way here.
        if lock(&self.waiting).remove(&self.key).is_some() {
            return None;
        }
        (&mut self.rx).await.ok()
    }

    /// The answer, however long it takes; `None` if the session went away without one.
    pub async fn answer(mut self) -> Option<String> {
        (&mut self.rx).await.ok()
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
    async fn no_answers_without_a_claim() {
        let book = WaitingPosts::default();
        assert_eq!(book.hand_over("1", "line".into()), Err("line".into()));
    }
}
