-- readings with usage_user > 90, all hosts, 12 hours: the time and the document
SELECT time, usage_user, usage_system, usage_idle, usage_nice, usage_iowait, usage_irq, usage_softirq, usage_steal, usage_guest, usage_guest_nice
  FROM cpu_typed
 WHERE time >= :'start' AND time < :'end' AND usage_user > 90
 ORDER BY time, hostname;
