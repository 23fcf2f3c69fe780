package idpbench.spring;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.annotation.web.configuration.EnableWebSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetails;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.crypto.factory.PasswordEncoderFactories;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

/**
 * The sample's DefaultSecurityConfig: every other request authenticated,
 * form login; here Spring Security's default login page (the sample's own
 * Thymeleaf page adds the federated logins, which are not measured) and the
 * benchmark's users in memory, as the sample keeps its one user.
 */
@EnableWebSecurity
@Configuration(proxyBeanMethods = false)
public class DefaultSecurityConfig {

	/**
	 * The actuator (health for the adapter's ready check, info and
	 * prometheus for readback and the report) without authentication: it
	 * listens on its own port on 127.0.0.1 (management.server.*).
	 */
	@Bean
	@Order(Ordered.HIGHEST_PRECEDENCE + 1)
	public SecurityFilterChain actuatorSecurityFilterChain(HttpSecurity http) throws Exception {
		http
			.securityMatcher("/actuator/**")
			.authorizeHttpRequests((authorize) -> authorize.anyRequest().permitAll());
		return http.build();
	}

	@Bean
	public SecurityFilterChain defaultSecurityFilterChain(HttpSecurity http) throws Exception {
		http
			.authorizeHttpRequests((authorize) -> authorize.anyRequest().authenticated())
			.formLogin(Customizer.withDefaults());
		return http.build();
	}

	/**
	 * Users NAME0..NAME(N-1) sharing one password from a file, encoded once
	 * by the framework's default encoder ({bcrypt}): each login checks it.
	 */
	@Bean
	public UserDetailsService users(@Value("${idpbench.users}") int count,
			@Value("${idpbench.username-prefix}") String prefix,
			@Value("${idpbench.user-password-file}") Path passwordFile) throws IOException {
		String encoded = PasswordEncoderFactories.createDelegatingPasswordEncoder()
			.encode(AuthorizationServerConfig.Secrets.read(passwordFile));
		List<UserDetails> users = new ArrayList<>(count);
		for (int i = 0; i < count; i++) {
			users.add(User.withUsername(prefix + i).password(encoded).roles("USER").build());
		}
		return new InMemoryUserDetailsManager(users);
	}

}
