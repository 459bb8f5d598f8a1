// A background thread that calls a function every dt until stopped: what the
// progress bar and the resource profiler both need between start and finish.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace tessera::diagnostics::detail {

class Ticker {
 public:
  Ticker() = default;
  Ticker(const Ticker&) = delete;
  Ticker& operator=(const Ticker&) = delete;
  ~Ticker() { stop(); }

  //! Calls `tick` every `dt` on a new thread until stop().
  void start(std::chrono::duration<double> dt, std::function<void()> tick) {
    stop();
    stop_ = false;
    thread_ = std::thread([this, dt, tick = std::move(tick)] {
      std::unique_lock lk(m_);
      while (!cv_.wait_for(lk, dt, [this] { return stop_; })) {
        lk.unlock();
        tick();
        lk.lock();
      }
    });
  }
  //! Stops and joins the thread; no tick runs after it returns.
  void stop() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard lk(m_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace tessera::diagnostics::detail
