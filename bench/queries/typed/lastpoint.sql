-- the last reading of every host
SELECT DISTINCT ON (hostname) hostname, time,
       usage_user,
       usage_system,
       usage_idle,
       usage_nice,
       usage_iowait,
       usage_irq,
       usage_softirq,
       usage_steal,
       usage_guest,
       usage_guest_nice
  FROM cpu_typed
 ORDER BY hostname, time DESC;
